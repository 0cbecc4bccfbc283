package chunk

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// check verifies the invariants every split keeps: spans in order, within
// bounds, covering every non-blank rune, never ending inside a word, text
// and hash derived from name, headings and span.
func check(t *testing.T, name, content string, cs []Chunk) {
	t.Helper()
	runes := []rune(content)
	pos := 0
	for i, c := range cs {
		if c.Start != pos {
			if strings.TrimSpace(string(runes[pos:c.Start])) != "" {
				t.Fatalf("chunk %d starts at %d, after a gap with text from %d", i, c.Start, pos)
			}
		}
		if c.End <= c.Start || c.End-c.Start > MaxRunes {
			t.Fatalf("chunk %d spans [%d,%d)", i, c.Start, c.End)
		}
		if c.End < len(runes) && !unicode.IsSpace(runes[c.End-1]) && !unicode.IsSpace(runes[c.End]) {
			t.Fatalf("chunk %d ends inside a word: %q|%q", i, string(runes[max(0, c.End-10):c.End]), string(runes[c.End:min(len(runes), c.End+10)]))
		}
		want := newChunk(name, runes, c.Start, c.End, c.Headings)
		if c != want {
			t.Fatalf("chunk %d = %+v, want %+v", i, c, want)
		}
		if !strings.HasPrefix(c.Text, name) {
			t.Fatalf("chunk %d text lacks the name: %q", i, c.Text)
		}
		pos = c.End
	}
	if strings.TrimSpace(string(runes[pos:])) != "" {
		t.Fatalf("text after the last chunk (%d of %d)", pos, len(runes))
	}
}

func TestShortFileIsOneChunk(t *testing.T) {
	content := "# Food\n\n- Loves bacalhau.\n- No coriander.\n"
	cs := Split("food.md", content)
	if len(cs) != 1 || cs[0].Headings != "Food" || cs[0].Text != "food.md › Food\n"+content {
		t.Fatalf("chunks = %+v", cs)
	}
	check(t, "food.md", content, cs)
	if Split("x.md", " \n\t") != nil {
		t.Fatal("blank content has chunks")
	}
}

func TestHeadingsListsAndBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Plans\n\nSome intro words about the plans for the year.\n\n")
	for s := range 4 {
		fmt.Fprintf(&b, "## Part %d\n\n", s)
		for i := range 12 {
			fmt.Fprintf(&b, "- item %d of part %d: %s\n  nested detail line\n", i, s, strings.Repeat("word ", 8))
		}
		b.WriteString("\n```\ncode that is kept together\n\nwith a blank line\n```\n\n")
		b.WriteString(strings.Repeat("A long paragraph sentence goes on. ", 40) + "\n\n")
	}
	content := b.String()
	cs := Split("plans.md", content)
	check(t, "plans.md", content, cs)
	if len(cs) < 6 {
		t.Fatalf("%d chunks", len(cs))
	}
	seen := map[string]bool{}
	for _, c := range cs {
		seen[c.Headings] = true
		body := content[len(string([]rune(content)[:c.Start])):]
		body = body[:len(string([]rune(content)[c.Start:c.End]))]
		if strings.Contains(body, "```\ncode") && !strings.Contains(body, "blank line\n```") {
			t.Fatalf("a fenced block was cut: %q", body)
		}
		if strings.Contains(body, "## Part 1") && c.Headings != "Plans › Part 1" && !strings.HasPrefix(body, "## Part 1") {
			continue
		}
	}
	for _, h := range []string{"Plans", "Plans › Part 0", "Plans › Part 3"} {
		if !seen[h] {
			t.Fatalf("no chunk with heading path %q in %v", h, seen)
		}
	}
	if !reflect.DeepEqual(cs, Split("plans.md", content)) {
		t.Fatal("not deterministic")
	}
}

func TestConversationTurns(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Session 3\n\n")
	for i := range 30 {
		fmt.Fprintf(&b, "User: question number %d about the garden and the weather this week?\n", i)
		fmt.Fprintf(&b, "Assistant: answer number %d, with a few words of advice on watering.\n", i)
	}
	content := b.String()
	cs := Split("session-03.md", content)
	check(t, "session-03.md", content, cs)
	runes := []rune(content)
	for _, c := range cs[1:] {
		if !strings.HasPrefix(string(runes[c.Start:c.End]), "User: ") && !strings.HasPrefix(string(runes[c.Start:c.End]), "Assistant: ") {
			t.Fatalf("a chunk starts inside a turn: %q", string(runes[c.Start:min(c.End, c.Start+30)]))
		}
		if c.Headings != "Session 3" {
			t.Fatalf("headings %q", c.Headings)
		}
	}
	// adk's session files: one heading per turn.
	b.Reset()
	for i := range 20 {
		fmt.Fprintf(&b, "### user · 2026-01-0%dT10:00:00Z\n\nI planted %d tomato seedlings on the balcony today and watered them.\n\n", i%9+1, i)
	}
	content = b.String()
	cs = Split("s.md", content)
	check(t, "s.md", content, cs)
	for _, c := range cs {
		if c.End-c.Start < MinRunes && len(cs) > 1 {
			t.Fatalf("a tiny chunk was not merged: %+v", c)
		}
	}
}

func TestLongWordsAndNoSpaces(t *testing.T) {
	content := strings.Repeat("x", 2500) + " tail words here"
	cs := Split("a.md", content)
	for _, c := range cs {
		if c.End-c.Start > MaxRunes {
			t.Fatalf("span %d", c.End-c.Start)
		}
	}
	content = strings.Repeat("palavra ", 400) // 3,200 runes, spaces only
	check(t, "a.md", content, Split("a.md", content))
	content = strings.Repeat("ação é ", 400) // multi-byte runes
	check(t, "a.md", content, Split("a.md", content))
}

func TestEditChangesLocalChunks(t *testing.T) {
	var b strings.Builder
	for s := range 6 {
		fmt.Fprintf(&b, "## Topic %d\n\n%s\n\n", s, strings.Repeat(fmt.Sprintf("Sentence about topic %d. ", s), 30))
	}
	before := b.String()
	after := strings.Replace(before, "Sentence about topic 4.", "Sentence about topic four.", 1)
	a, c := Split("t.md", before), Split("t.md", after)
	hashes := map[string]bool{}
	for _, x := range a {
		hashes[x.Hash] = true
	}
	changed := 0
	for _, x := range c {
		if !hashes[x.Hash] {
			changed++
		}
	}
	if changed == 0 || changed > 2 || len(c) < 6 {
		t.Fatalf("%d of %d chunks changed", changed, len(c))
	}
}
