package lexis

import (
	"slices"
	"strings"
	"testing"
)

func TestRelatedWords(t *testing.T) {
	if got := RelatedWords("workout"); !slices.Contains(got, "gym") || !slices.Contains(got, "fitness") {
		t.Errorf("RelatedWords(workout) = %q, want gym and fitness among them", got)
	}
	for _, w := range []string{"", "qzxv", "the", "Workout", "workou", "workouts\t"} {
		if got := RelatedWords(w); got != nil {
			t.Errorf("RelatedWords(%q) = %q, want nil", w, got)
		}
	}
	// The first and the last line of the table are found.
	tb := loadRelated()
	for _, k := range []int{0, len(tb.lines) - 1} {
		w, _, _ := strings.Cut(tb.line(k), "\t")
		if len(RelatedWords(w)) == 0 {
			t.Errorf("RelatedWords(%q) (line %d) = nil", w, k)
		}
	}
	if len(tb.lines) < 10000 {
		t.Errorf("the table has %d words, want more than 10,000", len(tb.lines))
	}
}

func TestScannerRelated(t *testing.T) {
	sc := NewScanner()
	got := sc.Related("What are her workout habits?", 4)
	if len(got) != 2 {
		t.Fatalf("Related = %v, want a group for workout and one for habits", got)
	}
	for i, g := range got {
		if len(g.Terms) == 0 || len(g.Terms) > 4 {
			t.Errorf("group %q: want 1 to 4 terms", g.Terms)
		}
		if g.Of != i { // workout is query term 0, habits 1
			t.Errorf("group %d: Of = %d, want %d", i, g.Of, i)
		}
	}
	if !slices.Contains(got[0].Terms, "gym") {
		t.Errorf("workout's group %q lacks gym", got[0].Terms)
	}
	seen := map[string]bool{"workout": true, "habit": true}
	for _, g := range got {
		for _, term := range g.Terms {
			if seen[term] {
				t.Errorf("term %q is a query term or given twice (%v)", term, got)
			}
			seen[term] = true
			if IsStop(term) {
				t.Errorf("stop word %q among %v", term, got)
			}
		}
	}
	if g := sc.Related("the of and", 4); g != nil {
		t.Errorf("stop words: Related = %v, want nil", g)
	}
	if g := sc.Related("workout", 1); len(g) != 1 || len(g[0].Terms) != 1 {
		t.Errorf("perWord 1: Related = %v, want one term", g)
	}
}

func TestWords(t *testing.T) {
	words, terms := NewScanner().Words("Joana's café, don't RUNNING 東京")
	if want := []string{"joana", "cafe", "dont", "running", "東", "京"}; !slices.Equal(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	if want := []string{"joana", "cafe", "dont", "run", "東", "京"}; !slices.Equal(terms, want) {
		t.Errorf("terms = %q, want %q", terms, want)
	}
}
