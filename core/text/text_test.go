package text

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// words returns the words t finds in s, each as "folded@start-end/runeStart-runeEnd".
func words(t *Tokenizer, s string) []string {
	var out []string
	t.Each(s, func(w Word) {
		out = append(out, fmt.Sprintf("%s@%d-%d/%d-%d", w.Folded, w.Start, w.End, w.RuneStart, w.RuneEnd))
	})
	return out
}

func TestTokenizer(t *testing.T) {
	plain := &Tokenizer{}
	search := &Tokenizer{Ideographs: true, Apostrophes: true}
	for _, c := range []struct {
		tk   *Tokenizer
		in   string
		want []string
	}{
		{plain, "Hello, World!", []string{"hello@0-5/0-5", "world@7-12/7-12"}},
		{plain, "Façades, STRASSE, Straße", []string{"facades@0-8/0-7", "strasse@10-17/9-16", "strasse@19-26/18-24"}},
		// a combining mark belongs to its word and is dropped; one
		// starting a text starts no word
		{plain, "e\u0301te\u0301 \u0301x", []string{"ete@0-7/0-5", "x@10-11/7-8"}},
		{plain, "10:30 X1-Carbon ٣٤", []string{"10@0-2/0-2", "30@3-5/3-5", "x1@6-8/6-8", "carbon@9-15/9-15", "٣٤@16-20/16-18"}},
		{plain, "Ünïcödé ΑΘΗΝΑ Москва", []string{"unicode@0-11/0-7", "αθηνα@12-22/8-13", "москва@23-35/14-20"}},
		// not letters: superscripts, spacing marks (Mc), symbols, bad UTF-8
		{plain, "x²y हि a\xffb 😀z", []string{"x@0-1/0-1", "y@3-4/2-3", "ह@5-8/4-5", "a@12-13/7-8", "b@14-15/9-10", "z@20-21/12-13"}},
		{plain, "日本語 針", []string{"日本語@0-9/0-3", "針@10-13/4-5"}},
		{search, "日本語 針", []string{"日@0-3/0-1", "本@3-6/1-2", "語@6-9/2-3", "針@10-13/4-5"}},
		{search, "東京タワーへ", []string{"東@0-3/0-1", "京@3-6/1-2", "タ@6-9/2-3", "ワ@9-12/3-4", "ー@12-15/4-5", "へ@15-18/5-6"}},
		{plain, "don’t O'Brien 'quote' dogs'", []string{"don@0-3/0-3", "t@6-7/4-5", "o@8-9/6-7", "brien@10-15/8-13", "quote@17-22/15-20", "dogs@24-28/22-26"}},
		{search, "don’t O'Brien 'quote' dogs' l'été 90's", []string{"don't@0-7/0-5", "o'brien@8-15/6-13", "quote@17-22/15-20", "dogs@24-28/22-26", "l'ete@30-37/28-33", "90's@38-42/34-38"}},
		// an apostrophe before a digit, a mark or an ideograph ends the word
		{search, "a'1 b'\u0301 x'日", []string{"a@0-1/0-1", "1@2-3/2-3", "b@4-5/4-5", "x@9-10/8-9", "日@11-14/10-11"}},
		{plain, "  ... ''", nil},
		{search, "", nil},
	} {
		if got := words(c.tk, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v.Each(%q) = %q, want %q", *c.tk, c.in, got, c.want)
		}
	}
}

func TestTokenizerFold(t *testing.T) {
	keep := &Tokenizer{Fold: func(dst []byte, r rune) []byte {
		if r == 'é' || r == 'É' {
			return utf8.AppendRune(dst, 'é')
		}
		return AppendFold(dst, r)
	}}
	if got, want := words(keep, "Été Straße"), []string{"été@0-5/0-3", "strasse@6-13/4-10"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Each with Fold = %q, want %q", got, want)
	}
}

// TestWordOffsets checks, over random texts, that each word's offsets
// hold the word: tokenizing text[Start:End] gives that word alone, and
// the rune offsets count the runes before and within it.
func TestWordOffsets(t *testing.T) {
	pieces := []string{"a", "Z", "7", "é", "É", "ß", "\u0301", "'", "’", " ", "-", "日", "カ", "Σ", "\xff", "²", "ह", "ि", "s"}
	r := rand.New(rand.NewPCG(36, 1))
	for _, tk := range []*Tokenizer{{}, {Ideographs: true}, {Apostrophes: true}, {Ideographs: true, Apostrophes: true}} {
		for range 20000 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			s := b.String()
			tk.Each(s, func(w Word) {
				got := words(tk, s[w.Start:w.End])
				if len(got) != 1 || !strings.HasPrefix(got[0], string(w.Folded)+"@") {
					t.Fatalf("%+v: word %q of %q at %d-%d re-tokenizes as %q", *tk, w.Folded, s, w.Start, w.End, got)
				}
				if w.RuneStart != utf8.RuneCountInString(s[:w.Start]) || w.RuneEnd != utf8.RuneCountInString(s[:w.End]) {
					t.Fatalf("%+v: word %q of %q: runes %d-%d for bytes %d-%d", *tk, w.Folded, s, w.RuneStart, w.RuneEnd, w.Start, w.End)
				}
			})
		}
	}
}

// TestTokenizerReusesBuffer checks that a Tokenizer allocates nothing
// once its buffer has grown, and that reusing it never shows a word of an
// earlier text.
func TestTokenizerReusesBuffer(t *testing.T) {
	var tk Tokenizer
	long := "Straßenbahnhaltestelle, short"
	if got := words(&tk, long); len(got) != 2 {
		t.Fatalf("words(%q) = %q", long, got)
	}
	if got, want := words(&tk, "ab"), []string{"ab@0-2/0-2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second text: %q, want %q", got, want)
	}
	n := 0
	if a := testing.AllocsPerRun(10, func() { tk.Each(long, func(w Word) { n += len(w.Folded) }) }); a != 0 {
		t.Errorf("Each allocates %v times a call with a grown buffer", a)
	}
}

func TestAppendFold(t *testing.T) {
	for in, want := range map[string]string{
		"ÀÁÂÃÄÅàáâãäåĀāĂăĄą":     "aaaaaaaaaaaaaaaaaa",
		"ÇçĆćĈĉĊċČč":             "cccccccccc",
		"ĎďĐđÐð":                 "dddddd",
		"ÈÉÊËèéêëĒēĔĕĖėĘęĚě":     "eeeeeeeeeeeeeeeeee",
		"ĜĝĞğĠġĢģĤĥĦħ":           "gggggggghhhh",
		"ÌÍÎÏìíîïĨĩĪīĬĭĮįǏǐı":    "iiiiiiiiiiiiiiiiiii",
		"ĴĵĶķĹĺĻļĽľĿŀŁł":         "jjkkllllllllll",
		"ÑñŃńŅņŇňŉ":              "nnnnnnnnn",
		"ÒÓÔÕÖØòóôõöøŌōŎŏŐőǑǒ":   "oooooooooooooooooooo",
		"ŔŕŖŗŘřŚśŜŝŞşŠšȘș":       "rrrrrrssssssssss",
		"ŢţŤťŦŧȚțÞþ":             "ttttttttthth",
		"ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲųǓǔ": "uuuuuuuuuuuuuuuuuuuuuu",
		"ŴŵÝýÿŸŶŷŹźŻżŽž":         "wwyyyyyyzzzzzz",
		"ßẞÆæŒœ":                 "ssssaeaeoeoe",
		// lower-cased only: other scripts, letters without an ASCII base
		"ΣσςДЖ日ǄĲŊ": "σσςдж日ǆĳŋ",
		"İK":        "ik", // U+0130 and the Kelvin sign lower-case to ASCII
		"A-z 9.":    "a-z 9.",
	} {
		var b []byte
		for _, r := range in {
			b = AppendFold(b, r)
		}
		if string(b) != want {
			t.Errorf("AppendFold over %q = %q, want %q", in, b, want)
		}
	}
}

// TestFoldTable checks that every entry folds a lower-case Latin letter
// to ASCII letters, and that every letter of Latin-1 has one.
func TestFoldTable(t *testing.T) {
	for i, f := range foldTable {
		r := rune(foldLo + i)
		if f == "" {
			if r <= 0xff && unicode.IsLetter(r) {
				t.Errorf("Latin-1 letter %q has no folding", r)
			}
			continue
		}
		if !unicode.IsLower(r) || !unicode.Is(unicode.Latin, r) {
			t.Errorf("%q (U+%04X) in the table is not a lower-case Latin letter", r, r)
		}
		for _, c := range []byte(f) {
			if c < 'a' || c > 'z' {
				t.Errorf("%q folds to %q, not ASCII letters", r, f)
			}
		}
	}
}
