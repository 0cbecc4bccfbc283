package memory

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/memory/internal/notes"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

func TestSearchModes(t *testing.T) {
	_, s := newMem(t, nil)
	memtest.Put(t, s, "ana/main/food.md", "- Pescatarian; eats fish twice a week.\n")
	memtest.Put(t, s, "ana/main/commute.md", "- Cycles to the office when it is dry.\n")
	memtest.Put(t, s, "ana/main/travel.md", "- Prefers trains; the food on planes is bad.\n")
	for _, c := range []struct {
		mode  search.Mode
		query string
		want  []string
	}{
		{"", "cycling", []string{"commute.md"}},
		{search.BM25, "food", []string{"food.md", "travel.md"}},
		{search.Literal, "cycling", nil},
		{search.Literal, "food", []string{"food.md", "travel.md"}},
	} {
		m := mustNew(t, s, &Options{SearchMode: c.mode})
		r := call(t, m, inv("ana"), "search_memory", map[string]any{"query": c.query}).(*SearchResult)
		var got []string
		for _, mt := range r.Matches {
			got = append(got, mt.File)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") || r.Scanned != 3 {
			t.Errorf("%q %q: %v (scanned %d), want %v", c.mode, c.query, got, r.Scanned, c.want)
		}
	}
	if _, err := New(s, &Options{SearchMode: "vector"}); !errors.Is(err, store.ErrInvalidSearchMode) {
		t.Fatalf("New with mode vector: %v", err)
	}
}

func TestSearchSharesTheBudget(t *testing.T) {
	// Twelve long sessions match: with default limits, ten come back (not
	// the one or two whose first snippet took the whole budget), each with
	// its share of the characters, in both modes.
	_, s := newMem(t, nil)
	for i := range 12 {
		body := strings.Repeat(fmt.Sprintf("We talked about the weather on day %d. ", i), 60)
		memtest.Put(t, s, fmt.Sprintf("ana/main/session-%02d.md", i), body+"Then the marathon came up. "+body)
	}
	for _, mode := range []search.Mode{search.BM25, search.Literal} {
		m := mustNew(t, s, &Options{SearchMode: mode})
		r := call(t, m, inv("ana"), "search_memory", map[string]any{"query": "marathon"}).(*SearchResult)
		if len(r.Matches) != DefaultMaxSearchResults || !r.Truncated {
			t.Fatalf("%s: %d matches, truncated %v", mode, len(r.Matches), r.Truncated)
		}
		total := 0
		for _, mt := range r.Matches {
			total += notes.Runes(mt.File) + notes.Runes(mt.Snippet)
			if !strings.Contains(mt.Snippet, "marathon") || notes.Runes(mt.Snippet) < 300 {
				t.Fatalf("%s: snippet of %s: %q", mode, mt.File, mt.Snippet)
			}
		}
		if total > DefaultMaxSearchResultChars {
			t.Fatalf("%s: %d chars", mode, total)
		}
	}
}

// TestSearchDescriptionFollowsMode: search_memory tells the model what
// its ranking matches: words alone in literal mode, other forms and
// related words in the default modes.
func TestSearchDescriptionFollowsMode(t *testing.T) {
	_, s := newMem(t, nil)
	desc := func(mode search.Mode) string {
		for _, spec := range mustNew(t, s, &Options{SearchMode: mode}).Tools() {
			if spec.Name == SearchTool {
				return spec.Description
			}
		}
		t.Fatalf("mode %q: no %s tool", mode, SearchTool)
		return ""
	}
	if d := desc(search.Literal); !strings.Contains(d, "for words") || strings.Contains(d, "related") {
		t.Errorf("literal: %q", d)
	}
	for _, mode := range []search.Mode{"", search.BM25} {
		if d := desc(mode); !strings.Contains(d, "related words") || !strings.Contains(d, "bounded snippets") {
			t.Errorf("%q: %q", mode, d)
		}
	}
}

// TestSearchRecency: SearchRecencyHalfLife reaches search_memory's
// request: two notes alike in every word come back newest first with it
// (by path without it), the same two either way; a negative half-life is
// refused.
func TestSearchRecency(t *testing.T) {
	// Versions increase across the process, and other tests of the package
	// write on clocks they moved hours on: start well past them.
	t0 := time.Now().Add(7 * 24 * time.Hour)
	clock := t0
	s := store.New(memtest.NewDriver(t), &store.Options{Now: func() time.Time { return clock }})
	t.Cleanup(func() { _ = s.Close() })
	memtest.Put(t, s, "ana/main/a-old.md", "- The heron nests by the river.\n")
	clock = t0.Add(2 * time.Millisecond) // a later write, by the store's clock
	memtest.Put(t, s, "ana/main/b-new.md", "- The heron nests by the river.\n")
	for _, c := range []struct {
		halfLife time.Duration
		want     string
	}{{0, "a-old.md,b-new.md"}, {time.Millisecond, "b-new.md,a-old.md"}} {
		m := mustNew(t, s, &Options{SearchRecencyHalfLife: c.halfLife})
		r := call(t, m, inv("ana"), "search_memory", map[string]any{"query": "heron river"}).(*SearchResult)
		var got []string
		for _, mt := range r.Matches {
			got = append(got, mt.File)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("half-life %s: %v, want %s", c.halfLife, got, c.want)
		}
	}
	if _, err := New(s, &Options{SearchRecencyHalfLife: -time.Hour}); !errors.Is(err, store.ErrInvalidBound) {
		t.Fatalf("New with a negative half-life: %v, want ErrInvalidBound", err)
	}
}
