// Package lexis turns text into search terms: Unicode-aware words, lower
// case, common Latin diacritics folded, English possessives dropped, and a
// Porter stemmer for ASCII words. Han, Hiragana and Katakana characters are
// one term each, since those scripts do not separate words with spaces.
//
// The same function serves documents and queries, so a term of one always
// compares equal to the same word of the other.
package lexis

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Token is one term of a text and where its word is, in runes.
type Token struct {
	// Term is the normalised, stemmed word.
	Term string
	// Start and End are rune offsets of the word in the text: [Start, End).
	Start, End int
}

// Scanner turns words into terms, caching each word's stem (at most
// [MaxStems] of them): searches stem the same few thousand words again and
// again. It also caches the related terms of the query words it was asked
// about ([Scanner.Related]). A Scanner is not safe for concurrent use.
type Scanner struct {
	stems   map[string]string
	related map[string][]string // word → relatedTerms(word)
	buf     []byte
}

// MaxStems bounds the stems a Scanner keeps; past it the cache starts
// over.
const MaxStems = 1 << 16

// NewScanner returns an empty Scanner.
func NewScanner() *Scanner { return &Scanner{stems: map[string]string{}} }

// Each calls fn for every term of s, in order, with its rune offsets.
func (sc *Scanner) Each(s string, fn func(term string, start, end int)) {
	sc.scan(s, func(start, end int) {
		if t := sc.term(); t != "" {
			fn(t, start, end)
		}
	})
}

// scan calls fn for every word of s, in order, with its rune offsets and
// the word, lower case and folded, in sc.buf.
func (sc *Scanner) scan(s string, fn func(start, end int)) {
	pos := 0        // rune offset of the next rune
	wordStart := -1 // rune offset where the current word began
	sc.buf = sc.buf[:0]
	flush := func(end int) {
		if wordStart >= 0 {
			fn(wordStart, end)
		}
		wordStart = -1
		sc.buf = sc.buf[:0]
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isIdeograph(r):
			flush(pos)
			sc.buf = utf8.AppendRune(sc.buf, unicode.ToLower(r))
			wordStart = pos
			flush(pos + 1)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if wordStart < 0 {
				wordStart = pos
			}
			sc.buf = appendFolded(sc.buf, r)
		case unicode.Is(unicode.Mn, r) && wordStart >= 0:
			// a combining mark continues its word and is dropped
		case (r == '\'' || r == '\u2019') && wordStart >= 0 && i+size < len(s) && isLetterAt(s[i+size:]):
			sc.buf = append(sc.buf, '\'')
		default:
			flush(pos)
		}
		i += size
		pos++
	}
	flush(pos)
}

// Words returns the words of s in order, lower case, folded, without
// possessives or apostrophes ("Joana's" → "joana", "don't" → "dont"),
// each with its term.
func (sc *Scanner) Words(s string) (words, terms []string) {
	sc.scan(s, func(_, _ int) {
		w := string(sc.buf) // most words have no apostrophe to clean
		if bytes.IndexByte(sc.buf, '\'') >= 0 {
			w = string(clean(sc.buf))
		}
		if t := sc.term(); t != "" {
			words, terms = append(words, w), append(terms, t)
		}
	})
	return words, terms
}

// Tokens returns the terms of s with their offsets.
func (sc *Scanner) Tokens(s string) []Token {
	var out []Token
	sc.Each(s, func(t string, start, end int) { out = append(out, Token{t, start, end}) })
	return out
}

// Terms returns the distinct terms of s in first-seen order.
func (sc *Scanner) Terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	sc.Each(s, func(t string, _, _ int) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// term normalises and stems the word in sc.buf.
func (sc *Scanner) term() string {
	if t, ok := sc.stems[string(sc.buf)]; ok {
		return t
	}
	key := string(sc.buf)
	t := string(Stem(clean(sc.buf)))
	if len(sc.stems) >= MaxStems {
		clear(sc.stems)
	}
	sc.stems[key] = t
	return t
}

// clean returns a copy of word without an English possessive or
// apostrophes: "dog's" → "dog", "don't" → "dont".
func clean(w []byte) []byte {
	if n := len(w); n > 2 && w[n-2] == '\'' && w[n-1] == 's' {
		w = w[:n-2]
	}
	out := make([]byte, 0, len(w))
	for _, b := range w {
		if b != '\'' {
			out = append(out, b)
		}
	}
	return out
}

func isLetterAt(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

func isIdeograph(r rune) bool {
	return r >= 0x2e80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}

// appendFolded appends r lower-cased, with a Latin diacritic removed
// ("é" → "e", "ß" → "ss", "æ" → "ae").
func appendFolded(b []byte, r rune) []byte {
	r = unicode.ToLower(r)
	if r < utf8.RuneSelf {
		return append(b, byte(r))
	}
	if f, ok := fold[r]; ok {
		return append(b, f...)
	}
	return utf8.AppendRune(b, r)
}

// fold maps lower-case Latin letters with diacritics to ASCII.
var fold = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ð': "d", 'þ': "th", 'ł': "l", 'ı': "i"}
	for base, letters := range map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ď", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥħ",
		"i": "ìíîïĩīĭįǐ", "j": "ĵ", "k": "ķ", "l": "ĺļľŀ", "n": "ñńņňŉ", "o": "òóôõöōŏőǒ",
		"r": "ŕŗř", "s": "śŝşšș", "t": "ţťŧț", "u": "ùúûüũūŭůűųǔ", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()
