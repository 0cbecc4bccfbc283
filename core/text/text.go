// Package text splits text into words and folds them, the one way
// agentmem's search and its word-vector embedder read text: a word is a run
// of letters and digits, lower-cased, with the diacritics of Latin letters
// removed ("Façade" → "facade", "Straße" → "strasse") and combining marks
// dropped, so that a word typed with or without accents, in any case, is the
// same word.
//
// The package is small and needs only the standard library; what a caller
// does with the words (stemming, stop words, related words, a vocabulary
// lookup) is the caller's.
package text

import (
	"unicode"
	"unicode/utf8"
)

// A Tokenizer splits text into words. A word is a run of letters and
// digits (Unicode categories L and Nd); a combining mark (Mn) inside a word
// belongs to it and is dropped ("e\u0301" is "e"); every other character
// ends a word. Each word comes lower-cased and folded: ASCII letters
// lower-cased, other letters and digits by Fold.
//
// The zero value is ready: it keeps a run of ideographs as one word and
// ends a word at an apostrophe. A Tokenizer reuses a buffer between calls,
// so it is not safe for concurrent use.
type Tokenizer struct {
	// Ideographs makes each Han, Hiragana and Katakana character a word of
	// its own ("日本語" is three words), since those scripts do not separate
	// words with spaces.
	Ideographs bool
	// Apostrophes keeps an apostrophe (' or ’) that joins a word to a
	// following letter inside the word, written as ' ("don’t" → "don't",
	// "O'Brien" → "o'brien"); without it an apostrophe ends a word like
	// other punctuation. An apostrophe before an ideograph that Ideographs
	// splits off ends the word.
	Apostrophes bool
	// Fold appends a non-ASCII letter or digit r of a word to dst as the
	// word holds it and returns the extended slice; nil means AppendFold.
	Fold func(dst []byte, r rune) []byte

	buf []byte
}

// Word is one word of a text.
type Word struct {
	// Folded is the word lower-cased and folded. It is the Tokenizer's
	// buffer, valid only until the function it is passed to returns.
	Folded []byte
	// Start and End are the word's byte offsets in the text: text[Start:End]
	// is the word as written, with its combining marks.
	Start, End int
	// RuneStart and RuneEnd are the same offsets counted in runes (a byte
	// that is not valid UTF-8 counts as one).
	RuneStart, RuneEnd int
}

// Each calls fn with each word of s, in order.
func (t *Tokenizer) Each(s string, fn func(Word)) {
	fold := t.Fold
	if fold == nil {
		fold = AppendFold
	}
	w := Word{Folded: t.buf[:0], Start: -1}
	runes := 0 // runes before s[i]
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			if w.Start < 0 {
				w.Start, w.RuneStart = i, runes
			}
			w.Folded = append(w.Folded, c)
		case 'A' <= c && c <= 'Z':
			if w.Start < 0 {
				w.Start, w.RuneStart = i, runes
			}
			w.Folded = append(w.Folded, c+'a'-'A')
		case c < utf8.RuneSelf:
			if c == '\'' && t.joins(w.Start, s[i+1:]) {
				w.Folded = append(w.Folded, '\'')
			} else if w.Start >= 0 {
				w.End, w.RuneEnd = i, runes
				fn(w)
				w.Start, w.Folded = -1, w.Folded[:0]
			}
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case t.Ideographs && isIdeograph(r):
				if w.Start >= 0 {
					w.End, w.RuneEnd = i, runes
					fn(w)
					w.Folded = w.Folded[:0]
				}
				w.Start, w.RuneStart, w.End, w.RuneEnd = i, runes, i+size, runes+1
				w.Folded = fold(w.Folded, r)
				fn(w)
				w.Start, w.Folded = -1, w.Folded[:0]
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				if w.Start < 0 {
					w.Start, w.RuneStart = i, runes
				}
				w.Folded = fold(w.Folded, r)
			case unicode.Is(unicode.Mn, r) && w.Start >= 0:
				// a combining mark continues its word and is dropped
			case r == '\u2019' && t.joins(w.Start, s[i+size:]):
				w.Folded = append(w.Folded, '\'')
			case w.Start >= 0:
				w.End, w.RuneEnd = i, runes
				fn(w)
				w.Start, w.Folded = -1, w.Folded[:0]
			}
		}
		i += size
		runes++
	}
	if w.Start >= 0 {
		w.End, w.RuneEnd = len(s), runes
		fn(w)
	}
	t.buf = w.Folded[:0]
}

// joins reports whether an apostrophe followed by rest joins the word
// that began at byte start (-1: none) to the letter after it.
func (t *Tokenizer) joins(start int, rest string) bool {
	if !t.Apostrophes || start < 0 || rest == "" {
		return false
	}
	if c := rest[0]; c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLetter(r) && !(t.Ideographs && isIdeograph(r))
}

// IsApostrophe reports whether r is an apostrophe: ' or its typographic
// form ’ (U+2019).
func IsApostrophe(r rune) bool { return r == '\'' || r == '\u2019' }

// isIdeograph reports whether r is a Han, Hiragana or Katakana character.
func isIdeograph(r rune) bool {
	return r >= 0x2e80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}
