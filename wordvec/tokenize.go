package wordvec

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/text"
)

// unfoldedV1 are the Latin letters with diacritics that text.AppendFold
// folds and this module's first model ("…-int8@1", see Embedder.Model)
// keeps as they are, so that its vectors stay what they were: folding them
// too changes the vectors of texts that have them, which takes a new
// model id.
const unfoldedV1 = "ĉċĕĝġģĥħĩĭĵķĺļŀņŉŏŗŝŧũŭŵŷǐǒǔ"

// foldV1 folds a word's letter r as model @1 does: as text.AppendFold
// but for the letters of unfoldedV1, which it only lower-cases.
func foldV1(dst []byte, r rune) []byte {
	if lower := unicode.ToLower(r); strings.ContainsRune(unfoldedV1, lower) {
		return utf8.AppendRune(dst, lower)
	}
	return text.AppendFold(dst, r)
}

var notWord = []byte("not")

// tokens calls emit with each word of s as a text.Tokenizer splits it
// (runs of letters and digits, lower-cased and folded to ASCII where the
// letter has an ASCII base, ideographs in runs), with foldV1's folding.
// An apostrophe ends a word: "n't" after it becomes the word "not", and
// the clitics 's, 'll, 're, 've, 'd and 'm are dropped. buf is scratch
// space, returned for the next call; the slice passed to emit is only
// valid during the call.
func tokens(s string, buf []byte, emit func([]byte)) []byte {
	tk := text.Tokenizer{Fold: foldV1}
	skip := 0 // a word that starts before skip was a clitic, already handled
	tk.Each(s, func(w text.Word) {
		if w.Start < skip {
			return
		}
		word := w.Folded
		r, size := utf8.DecodeRuneInString(s[w.End:])
		if !text.IsApostrophe(r) {
			emit(word)
			return
		}
		after := w.End + size
		switch suffix := clitic(s[after:]); suffix {
		case "t":
			if n := len(word); n > 1 && word[n-1] == 'n' {
				switch string(word) {
				case "can":
				case "won":
					buf = append(buf[:0], "will"...)
					word = buf
				default:
					word = word[:n-1]
				}
				emit(word)
				emit(notWord)
				skip = after + len(suffix)
				return
			}
		case "s", "ll", "re", "ve", "d", "m":
			emit(word)
			skip = after + len(suffix)
			return
		}
		emit(word)
	})
	return buf
}

// clitic returns the letters after an apostrophe when they end the word.
func clitic(rest string) string {
	n := 0
	for n < len(rest) && n < 3 {
		c := rest[n]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			n++
			continue
		}
		break
	}
	if n == len(rest) || n < len(rest) && !isWordByte(rest[n]) {
		s := rest[:n]
		lower := make([]byte, len(s))
		for i := range len(s) {
			lower[i] = s[i] | 0x20
		}
		return string(lower)
	}
	return ""
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= utf8.RuneSelf
}

// lookup finds word in the table, or else a form of it without a plural,
// -ing or -ed ending ("berries" → "berry", "running" → "run", "baked" →
// "bake"); -1 if none is there.
func (t *table) lookup(word []byte, scratch *[]byte) int {
	if i := t.index(word); i >= 0 {
		return i
	}
	n := len(word)
	try := func(stem []byte, add string) int {
		*scratch = append(append((*scratch)[:0], stem...), add...)
		return t.index(*scratch)
	}
	has := func(s string) bool { return n > len(s)+1 && string(word[n-len(s):]) == s }
	var i = -1
	switch {
	case has("ies"):
		i = try(word[:n-3], "y")
	case has("es") || has("s") && word[n-2] != 's':
		if i = try(word[:n-1], ""); i < 0 && has("es") {
			i = try(word[:n-2], "")
		}
	case has("ing"):
		stem := word[:n-3]
		if i = try(stem, ""); i < 0 {
			if i = try(stem, "e"); i < 0 && doubled(stem) {
				i = try(stem[:len(stem)-1], "")
			}
		}
	case has("ied"):
		i = try(word[:n-3], "y")
	case has("ed"):
		stem := word[:n-2]
		if i = try(word[:n-1], ""); i < 0 {
			if i = try(stem, ""); i < 0 && doubled(stem) {
				i = try(stem[:len(stem)-1], "")
			}
		}
	}
	return i
}

// doubled reports whether stem ends in a doubled consonant ("runn").
func doubled(stem []byte) bool {
	n := len(stem)
	if n < 2 || stem[n-1] != stem[n-2] {
		return false
	}
	switch stem[n-1] {
	case 'a', 'e', 'i', 'o', 'u', 'l', 's':
		return false
	}
	return true
}
