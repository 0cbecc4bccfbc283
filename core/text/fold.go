package text

import (
	"unicode"
	"unicode/utf8"
)

// AppendFold appends r to dst lower-cased and, for a Latin letter with a
// diacritic, as its ASCII base letter or letters ("É" → "e", "ß" → "ss",
// "Æ" → "ae", "þ" → "th"), and returns the extended slice. Other runes are
// appended lower-cased (unicode.ToLower).
func AppendFold(dst []byte, r rune) []byte {
	r = unicode.ToLower(r)
	if r < utf8.RuneSelf {
		return append(dst, byte(r))
	}
	if r >= foldLo && r < foldLo+rune(len(foldTable)) {
		if f := foldTable[r-foldLo]; f != "" {
			return append(dst, f...)
		}
	}
	return utf8.AppendRune(dst, r)
}

// foldLo is the first rune of foldTable: ß, U+00DF.
const foldLo = 0xdf

// foldTable maps lower-case Latin letters with diacritics, from foldLo to
// the end of Latin Extended-B, to ASCII: those of Latin-1 and Latin
// Extended-A, pinyin's ǐ, ǒ and ǔ, Romanian's ș and ț.
var foldTable = func() (t [0x250 - foldLo]string) {
	for r, f := range map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ð': "d", 'þ': "th", 'ł': "l", 'ı': "i"} {
		t[r-foldLo] = f
	}
	for _, b := range [...]struct{ base, letters string }{
		{"a", "àáâãäåāăą"}, {"c", "çćĉċč"}, {"d", "ď"}, {"e", "èéêëēĕėęě"}, {"g", "ĝğġģ"}, {"h", "ĥħ"},
		{"i", "ìíîïĩīĭįǐ"}, {"j", "ĵ"}, {"k", "ķ"}, {"l", "ĺļľŀ"}, {"n", "ñńņňŉ"}, {"o", "òóôõöōŏőǒ"},
		{"r", "ŕŗř"}, {"s", "śŝşšș"}, {"t", "ţťŧț"}, {"u", "ùúûüũūŭůűųǔ"}, {"w", "ŵ"}, {"y", "ýÿŷ"}, {"z", "źżž"},
	} {
		for _, r := range b.letters {
			t[r-foldLo] = b.base
		}
	}
	return t
}()
