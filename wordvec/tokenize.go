package wordvec

import (
	"unicode"
	"unicode/utf8"
)

// fold maps lower-case Latin letters with diacritics to the ASCII the table's
// words are written in (GloVe 6B as packaged has ASCII words only).
var fold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ă': "a", 'ą': "a",
	'æ': "ae", 'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ė': "e", 'ę': "e", 'ě': "e",
	'ğ': "g", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'ı': "i", 'į': "i",
	'ł': "l", 'ľ': "l", 'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ő': "o", 'œ': "oe",
	'ŕ': "r", 'ř': "r", 'ś': "s", 'š': "s", 'ş': "s", 'ș': "s", 'ß': "ss",
	'ť': "t", 'ţ': "t", 'ț': "t", 'þ': "th",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ū': "u", 'ů': "u", 'ű': "u", 'ų': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

var notWord = []byte("not")

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// tokens calls emit with each word of text, lower-cased and folded to ASCII
// where the letter has an ASCII base. Words are runs of letters and digits;
// an apostrophe inside a word ends it: "n't" becomes the word "not", and the
// clitics 's, 'll, 're, 've, 'd and 'm are dropped. buf is scratch space; the
// slice passed to emit is only valid during the call.
func tokens(text string, buf []byte, emit func([]byte)) []byte {
	word := buf[:0]
	flush := func() {
		if len(word) > 0 {
			emit(word)
			word = word[:0]
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			word = append(word, byte(r))
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			word = append(word, byte(r+'a'-'A'))
		case isApostrophe(r) && len(word) > 0:
			suffix := clitic(text[i:])
			switch suffix {
			case "t":
				if n := len(word); n > 1 && word[n-1] == 'n' {
					switch string(word) {
					case "can":
					case "won":
						word = append(word[:0], "will"...)
					default:
						word = word[:n-1]
					}
					flush()
					emit(notWord)
					i += len(suffix)
					continue
				}
			case "s", "ll", "re", "ve", "d", "m":
				flush()
				i += len(suffix)
				continue
			}
			flush()
		case r >= utf8.RuneSelf:
			lower := unicode.ToLower(r)
			if f, ok := fold[lower]; ok {
				word = append(word, f...)
			} else if unicode.Is(unicode.Mn, lower) {
				// A combining mark (a decomposed accent) belongs to the
				// letter before it, which is kept bare.
			} else if unicode.IsLetter(lower) || unicode.IsDigit(lower) {
				word = utf8.AppendRune(word, lower)
			} else {
				flush()
			}
		default:
			flush()
		}
	}
	flush()
	return word
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
