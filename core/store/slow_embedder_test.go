package store_test

import (
	"context"
	"errors"
	syncatomic "sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// stallEmbedder embeds each text as a vector of its length until stall
// is set; from then on each call blocks until release is closed, minding
// its context only when polite.
type stallEmbedder struct {
	stall   syncatomic.Bool
	polite  bool
	release chan struct{}
}

func (e *stallEmbedder) Model() string { return "stall-1" }

func (e *stallEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.stall.Load() {
		if e.polite {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-e.release:
			}
		} else {
			<-e.release
		}
		return nil, errors.New("released")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{1, float32(len(t))}
	}
	return out, nil
}

// ExpandQuery stalls like Embed.
func (e *stallEmbedder) ExpandQuery(ctx context.Context, _ string) ([]string, error) {
	_, err := e.Embed(ctx, []string{""})
	return nil, err
}

// TestHybridSearchOutlivesAStalledEmbedder: a hybrid search whose
// embedder hangs (minding its context or not) answers from BM25 within
// the search's deadline, as docs/search.md promises, instead of failing
// with the deadline.
func TestHybridSearchOutlivesAStalledEmbedder(t *testing.T) {
	for _, polite := range []bool{true, false} {
		emb := &stallEmbedder{polite: polite, release: make(chan struct{})}
		s := store.New(newMemDriver(t), &store.Options{Embedder: emb})
		ctx := t.Context()
		for name, c := range map[string]string{"a.md": "the heron nests by the river", "b.md": "oat milk and rye bread"} {
			if _, err := s.Write(ctx, store.WriteRequest{Path: "u/main/" + name, Content: c}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.WaitIndexed(ctx); err != nil {
			t.Fatal(err)
		}
		emb.stall.Store(true)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		res, err := s.Search(sctx, store.SearchRequest{Prefix: "u/main/", Query: "heron river", Mode: store.SearchHybrid,
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
		close(emb.release)
		emb.stall.Store(false)
		_ = s.Close()
	}
}
