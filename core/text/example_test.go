package text_test

import (
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/text"
)

func ExampleTokenizer() {
	const s = "Façades of the Straße: don’t miss O'Brien's 東京 tour at 10:30!"
	words := func(t *text.Tokenizer) string {
		var out []string
		t.Each(s, func(w text.Word) { out = append(out, string(w.Folded)) })
		return strings.Join(out, " ")
	}
	var plain text.Tokenizer
	fmt.Println(words(&plain))
	search := text.Tokenizer{Ideographs: true, Apostrophes: true}
	fmt.Println(words(&search))
	// Output:
	// facades of the strasse don t miss o brien s 東京 tour at 10 30
	// facades of the strasse don't miss o'brien's 東 京 tour at 10 30
}

func ExampleWord() {
	var t text.Tokenizer
	s := "Crème brûlée"
	t.Each(s, func(w text.Word) {
		fmt.Printf("%s %q bytes %d-%d runes %d-%d\n", w.Folded, s[w.Start:w.End], w.Start, w.End, w.RuneStart, w.RuneEnd)
	})
	// Output:
	// creme "Crème" bytes 0-6 runes 0-5
	// brulee "brûlée" bytes 7-15 runes 6-12
}

func ExampleAppendFold() {
	var b []byte
	for _, r := range "Ærø-Ǆ" {
		b = text.AppendFold(b, r)
	}
	fmt.Println(string(b))
	// Output: aero-ǆ
}
