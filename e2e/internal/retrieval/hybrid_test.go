package retrieval

import (
	"testing"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/wordvec"
)

// BenchmarkRetrievalHybrid reports search quality through search_memory
// with default limits for literal, BM25 and hybrid search (BM25 fused with
// module wordvec's vectors) on dev.json and the three notes sets (recall@1,
// recall@3, MRR) and on the four conversation sets (session recall@5, every
// evidence session in the first 5, MRR); ns/op is one search_memory call. Without dev.json ([FindDevSet]) that set
// is left out, saying why, and the others run.
func BenchmarkRetrievalHybrid(b *testing.B) {
	emb, err := wordvec.New(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchmark(b, []search.Mode{search.Literal, search.BM25, search.Hybrid}, &store.Options{Embedder: emb})
}

// TestHybridSaysNoMatch pins honest answers with the offline embedder: on
// the notes sets and the hand-written conversations, most questions about
// things a user never wrote down match no file (before the vector floor,
// none did: every file came back), while recall over what the model is
// shown (matches, or the related files when nothing matched) stays at
// its figures without the floor.
func TestHybridSaysNoMatch(t *testing.T) {
	emb, err := wordvec.New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set    Set
		recall float64 // recall@3 for notes, @5 for conversations
	}{{Notes(), 0.98}, {Notes2(), 0.875}, {Notes3(), 0.90}, {Chats(), 0.98}} {
		rep, err := EvaluateWith(t.Context(), WithAbsent(c.set), search.Hybrid, &store.Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		a := rep[AbsentKind]
		if a == nil || a.N < 5 {
			t.Fatalf("%s: %+v questions about things no note mentions, want at least 5", c.set.Name, a)
		}
		if a.NoMatch < 0.7 {
			t.Errorf("%s: %.3f of %d questions about things no note mentions matched nothing, want ≥ 0.7", c.set.Name, a.NoMatch, a.N)
		}
		r := rep["all"].Recall3
		if c.set.Name == Chats().Name {
			r = rep["all"].Recall5
		}
		if r < c.recall {
			t.Errorf("%s: hybrid recall %.3f, want ≥ %.3f", c.set.Name, r, c.recall)
		}
	}
}
