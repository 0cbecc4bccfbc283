package memory

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/notes"
)

// refLastLines is the snapshot's former preparation of MEMORY.md, over the
// whole text: normalise and escape everything, trim, split, keep the last k.
func refLastLines(content string, k int) ([]string, int) {
	lines := notes.SplitLines(strings.TrimRightFunc(notes.EscapeTags(strings.Join(notes.SplitLines(content), "\n")), notes.IsSpace))
	keep := min(len(lines), k)
	return lines[len(lines)-keep:], len(lines) - keep
}

// refFit is the former fit of the MEMORY.md lines: one line at a time.
func refFitLines(v *view, budget int) {
	for len(v.lines) > 0 && v.length() > budget {
		v.lineChars -= notes.Runes(v.lines[0])
		v.lines, v.dropped = v.lines[1:], v.dropped+1
	}
}

func randomNotebook(r *rand.Rand) string {
	pieces := []string{"a", "bc", "déf", "日本", "✓", " ", "\t", "\n", "\n", "\n", "\r\n", "\r", "\v", "\f",
		"\x1c", "\x1d", "\x1e", "\u0085", "\u2028", "\u2029", "<memory>", "</memory>", "< / MEMORY ", "<\nmemory",
		"<", "memory", "\u200b", "- fact ", "\r\r\n", "\n\r"}
	var b strings.Builder
	for range r.IntN(60) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestLastLinesMatchesWholeText: the tail-only preparation gives exactly
// the lines and the count of earlier lines that preparing the whole text
// gave, for any mix of line breaks, tags and trailing space.
func TestLastLinesMatchesWholeText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 18))
	for i := range 5000 {
		content := randomNotebook(r)
		k := r.IntN(6)
		got, gotDropped := lastLines(strings.TrimRightFunc(content, notes.IsSpace), k, 1<<30)
		want, wantDropped := refLastLines(content, k)
		if !slices.Equal(got, want) || gotDropped != wantDropped {
			t.Fatalf("case %d, k=%d, %q:\n got %q, %d earlier\nwant %q, %d earlier", i, k, content, got, gotDropped, want, wantDropped)
		}
	}
}

// TestFitMatchesOneLineAtATime: newView and fit keep exactly the lines
// (and report the count of earlier ones) that preparing the whole text and
// dropping one line at a time did, for any budget up to the token budget
// (past which newView stops walking back).
func TestFitMatchesOneLineAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m := &Memory{heading: "Memory", names: toolNames{read: "read_memory", search: "search_memory"}}
	for i := range 3000 {
		var b strings.Builder
		for range r.IntN(120) {
			b.WriteString(strings.Repeat("x", r.IntN(40)))
			b.WriteString([]string{"\n", "\r\n", "\u2028"}[r.IntN(3)])
		}
		m.limits.MaxLines = 1 + r.IntN(100)
		m.limits.MaxTokens = 1 + r.IntN(400)
		budget := r.IntN(m.limits.MaxTokens*CharsPerToken + 1)
		files := []string{"a.md", "b.md"}[:r.IntN(3)]
		got := m.newView(b.String(), files, "", false, false)
		want := m.newView("", files, "", false, false)
		want.lines, want.dropped = refLastLines(b.String(), m.limits.MaxLines)
		for _, l := range want.lines {
			want.lineChars += notes.Runes(l)
		}
		for len(want.files) > budget/CharsPerToken {
			want.dropFile()
		}
		for len(want.files) > 0 && want.length() > budget {
			want.dropFile()
		}
		refFitLines(want, budget)
		if want.dropped > 0 && want.length() > budget {
			want.dropped = 0
		}
		got.fit(budget)
		if !slices.Equal(got.lines, want.lines) || got.dropped != want.dropped || got.String() != want.String() {
			t.Fatalf("case %d, budget %d: kept %d lines (%d dropped), want %d (%d dropped)", i, budget, len(got.lines), got.dropped, len(want.lines), want.dropped)
		}
	}
}
