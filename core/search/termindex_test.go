package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// TestTermIndexRanksAsAScan: a BM25 search answered by the term index
// returns what scoring every file of the folder would (the same files,
// scores and snippets), whatever the folder's size, after writes, changes
// and deletes.
func TestTermIndexRanksAsAScan(t *testing.T) {
	ctx := t.Context()
	s := newTestStore(&nnDriver{rows: map[string]driver.File{}}, nil)
	defer s.Close()
	words := strings.Fields("heron river cat city trains flights lisbon porto project week detail running runner runs " +
		"garden tomatoes basil sofa kitten office morning coffee beans bike locks dentist molar insurance car vehicle")
	rng := rand.New(rand.NewPCG(7, 11))
	note := func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for range 5 + rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return b.String()
	}
	const n = 400
	for i := range n {
		if _, err := s.Write(ctx, WriteRequest{Path: fmt.Sprintf("u/main/%s-%03d.md", words[i%len(words)], i), Content: note(i)}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"heron river", "where does the cat live", "runner", "trains to Porto", "coffee beans morning", "vehicle", "zebra"}
	check := func(when string, exact bool) {
		t.Helper()
		for _, q := range queries {
			r := Request{Prefix: "u/main/", Query: q, Mode: BM25, Limit: 10, MaxFiles: 10000, MaxChars: 3000, MaxFileChars: 5000}
			got, err := s.Search(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if got.Fallback != "" {
				t.Fatalf("%s: %q fell back: %s", when, q, got.Fallback)
			}
			cands, _, err := s.candidates(ctx, r) // every file of the folder
			if err != nil {
				t.Fatal(err)
			}
			want := rank(&s.cache, r, Fields(strings.ToLower(q)), cands)
			if !exact {
				// Changes not yet indexed count in no statistics, so
				// scores may differ a little; the files returned are
				// read as they are now.
				byPath := map[string]bool{}
				for _, c := range cands {
					byPath[c.path] = true
				}
				for _, m := range got.Matches {
					if !byPath[m.Path] {
						t.Fatalf("%s: %q returned %s, which is gone", when, q, m.Path)
					}
				}
				continue
			}
			if !reflect.DeepEqual(got.Matches, want.Matches) {
				t.Fatalf("%s: %q from the index:\n%+v\nscoring every file:\n%+v", when, q, got.Matches, want.Matches)
			}
			if got.Scanned != len(cands) {
				t.Fatalf("%s: %q scanned %d, want the folder's %d files", when, q, got.Scanned, len(cands))
			}
		}
	}
	check("after the writes", true)
	for i := 0; i < n; i += 7 {
		p := fmt.Sprintf("u/main/%s-%03d.md", words[i%len(words)], i)
		f, err := s.Read(ctx, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_, err = s.Write(ctx, WriteRequest{Path: p, Content: note(i + n), Expected: f.Version})
		} else {
			_, err = s.Delete(ctx, DeleteRequest{Path: p, Expected: f.Version})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	check("right after changes and deletes", false) // the pending changes are read
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	check("once they are indexed", true)
	if err := s.terms.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}
