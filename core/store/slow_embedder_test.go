package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestHybridSearchOutlivesAStalledEmbedder: a hybrid search whose
// embedder hangs (minding its context or not) answers from BM25 within
// the search's deadline, as docs/search.md promises, instead of failing
// with the deadline.
func TestHybridSearchOutlivesAStalledEmbedder(t *testing.T) {
	for _, polite := range []bool{true, false} {
		// The files are written without an embedder, then searched by a
		// store whose embedder hangs (newHangingEmbedder, shutdown_test.go).
		d := newMemDriver(t)
		plain := store.New(d, nil)
		ctx := t.Context()
		for name, c := range map[string]string{"a.md": "the heron nests by the river", "b.md": "oat milk and rye bread"} {
			if _, err := plain.Write(ctx, store.WriteRequest{Path: "u/main/" + name, Content: c}); err != nil {
				t.Fatal(err)
			}
		}
		s := store.New(d, &store.Options{Embedder: newHangingEmbedder(t, polite)})
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		res, err := s.Search(sctx, search.Request{Prefix: "u/main/", Query: "heron river", Mode: search.Hybrid,
			Limit: 5, MaxFiles: 100, MaxChars: 2000, MaxFileChars: 10000})
		searchErr := sctx.Err()
		cancel()
		if err != nil {
			t.Fatalf("polite=%v: search with a stalled embedder = %v, want BM25's answer", polite, err)
		}
		if len(res.Matches) != 1 || res.Matches[0].Path != "u/main/a.md" {
			t.Fatalf("polite=%v: matches = %+v, want a.md from BM25", polite, res.Matches)
		}
		if searchErr != nil {
			t.Fatalf("polite=%v: the search returned after its deadline (%v)", polite, searchErr)
		}
		sd, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_ = s.Shutdown(sd) // its indexer holds the search's files, at the hanging embedder
		cancel()
	}
}
