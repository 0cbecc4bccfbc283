package retrieval

import (
	"fmt"
	"testing"
	"time"

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

// BenchmarkRetrievalRecency reports search quality on the four
// conversation sets with search_memory weighing recency (a half-life of 7
// days, sessions written a day apart in their order: [NewRunnerAged]) and
// without, side by side, for BM25 and hybrid (wordvec); the questions
// about updated values also report where the session with the current
// value came (latest@5, latest-MRR). ns/op is one search_memory call.
func BenchmarkRetrievalRecency(b *testing.B) {
	emb, err := wordvec.New(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, set := range []Set{Conversations(convUsers, convSeed), ConversationsHard(hardUsers, hardSeed),
		ConversationsPeople(peoplePairs, peopleSeed), Chats()} {
		for _, m := range []search.Mode{search.BM25, search.Hybrid} {
			for _, h := range []time.Duration{0, recencyHalfLife} {
				label := "off"
				if h > 0 {
					label = h.String()
				}
				rep, err := EvaluateAged(b.Context(), set, m, &store.Options{Embedder: emb}, h)
				if err != nil {
					b.Fatal(err)
				}
				r, err := NewRunnerAged(b.Context(), set, m, &store.Options{Embedder: emb}, h)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("%s/%s/recency=%s", set.Name, m, label), func(b *testing.B) {
					if b.N == 1 {
						rep.Log(b, set.Name, fmt.Sprintf("%s recency=%s", m, label))
					}
					rep.ReportMetrics(b)
					if l := rep[LatestKind]; l != nil {
						b.ReportMetric(l.LatestMRR, "latest-MRR")
					}
					b.ResetTimer()
					for i := range b.N {
						if _, _, err := r.Run(b.Context(), i); err != nil {
							b.Fatal(err)
						}
					}
				})
				_ = r.Close()
			}
		}
	}
}

// recencyHalfLife is the half-life BenchmarkRetrievalRecency measures:
// a week, against sessions a day apart (22–30 of them per user).
const recencyHalfLife = 7 * 24 * time.Hour
