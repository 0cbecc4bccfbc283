package store_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// nearEmbedder puts "quixle" on one axis, "zorblat" a little towards it
// and each "note N" a little less, so that a question about a quixle has
// files close in meaning to it that stand out too little to be matches.
type nearEmbedder struct{}

func (nearEmbedder) Model() string { return "near-1" }

func (nearEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		var n int
		switch {
		case strings.Contains(t, "quixle"):
			out[i] = []float32{1, 0}
		case strings.Contains(t, "zorblat"):
			out[i] = []float32{0.11, 1}
		default:
			fmt.Sscanf(t[strings.Index(t, "note ")+5:], "%d", &n)
			out[i] = []float32{0.02 * float32(n), 1}
		}
	}
	return out, nil
}

// TestRecursiveSearchRelated: a recursive search that no folder matches
// returns the folders' related files, merged by score then path, as each
// folder's own search returns them.
func TestRecursiveSearchRelated(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), &store.Options{Embedder: nearEmbedder{}})
	defer s.Close()
	for _, folder := range []string{"u/a/", "u/b/"} {
		for n := range 6 {
			mustWrite(t, s, fmt.Sprintf("%sn%d.md", folder, n), fmt.Sprintf("A note %d about the weather.", n), "")
		}
		mustWrite(t, s, folder+"z.md", "The zorblat is parked behind the garage.", "")
	}
	req := search.Request{Prefix: "u/", Query: "where is my quixle", Mode: search.Hybrid, Limit: 10, MaxFiles: 100, MaxChars: 10000, MaxFileChars: 1000}
	var want []search.Match
	for _, folder := range []string{"u/a/", "u/b/"} {
		q := req
		q.Prefix = folder
		res, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 0 || len(res.Related) == 0 {
			t.Fatalf("%s alone: matches %+v, related %+v; want related files only", folder, res.Matches, res.Related)
		}
		want = append(want, res.Related...)
	}
	slices.SortFunc(want, func(a, b search.Match) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Path, b.Path))
	})
	req.Recursive = true
	res, err := s.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 0 || !reflect.DeepEqual(res.Related, want) || res.Scanned != 14 {
		t.Fatalf("recursive: matches %+v, related %+v, scanned %d; want no match, related %+v of 14 files", res.Matches, res.Related, res.Scanned, want)
	}
	// A word of one folder's file: a match there, and no related file.
	req.Query = "quixle garage"
	if res, err = s.Search(ctx, req); err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) == 0 || res.Related != nil {
		t.Fatalf("with a word in common: matches %+v, related %+v; want matches only", res.Matches, res.Related)
	}
}

// TestRecursiveSearchFallback: a recursive search says it scanned while
// one of its folders' indexes was being built, and not once they are.
func TestRecursiveSearchFallback(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	mustWrite(t, s, "u/a/n.md", "the needle", "")
	for n := range 120 {
		mustWrite(t, s, fmt.Sprintf("u/b/n%03d.md", n), "a needle in a haystack", "")
	}
	req := search.Request{Prefix: "u/", Query: "needle", Mode: search.BM25, Recursive: true, Limit: 5, MaxFiles: 100, MaxChars: 2000, MaxFileChars: 1000}
	res, err := s.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fallback != search.FallbackBuilding || !res.Truncated || res.Scanned != 101 {
		t.Fatalf("while u/b/'s index is built: fallback %q, truncated %v, scanned %d; want %q, truncated, 1+100 files", res.Fallback, res.Truncated, res.Scanned, search.FallbackBuilding)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err = s.Search(ctx, req); err != nil {
		t.Fatal(err)
	}
	if res.Fallback != "" || res.Scanned != 121 {
		t.Fatalf("indexed: fallback %q, scanned %d; want none, 121 files", res.Fallback, res.Scanned)
	}
	req.Mode = search.Literal
	if res, err = s.Search(ctx, req); err != nil {
		t.Fatal(err)
	}
	if res.Fallback != search.FallbackLiteral {
		t.Fatalf("literal: fallback %q, want %q", res.Fallback, search.FallbackLiteral)
	}
}
