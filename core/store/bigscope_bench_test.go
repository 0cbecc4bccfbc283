package store_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// bigSession returns a conversation-sized file (about 6,500 characters)
// of words drawn from a vocabulary of 5,000, so that files share some
// words and not others, as sessions of one user do.
func bigSession(r *rand.Rand, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %d\n\n", i)
	for b.Len() < 6500 {
		b.WriteString("- user: ")
		for range 12 {
			fmt.Fprintf(&b, "w%d ", int(r.ExpFloat64()*600)%5000)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkSearchLargeScope is one search over a scope of 1,000 files of
// about 6,500 characters each (1,000 sessions of a long conversation
// kept one file per session) with the notebook's default bounds: the
// store's analysis cache must serve repeated searches over it without
// analysing every file again (bm25-vs-literal reports the ratio; before
// the cache was packed and scan-resistant it was about 20x).
func BenchmarkSearchLargeScope(b *testing.B) {
	ctx := b.Context()
	s := store.New(newMemDriver(b), nil)
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/session-%04d.md", i), Content: bigSession(r, i)}); err != nil {
			b.Fatal(err)
		}
	}
	var took [2]time.Duration
	for i := range b.N {
		for m, mode := range []search.Mode{search.Literal, search.BM25} {
			req := search.Request{Prefix: "u/main/", Mode: mode, Query: fmt.Sprintf("w%d w%d", 3+i%40, 700+i%50),
				Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 20000}
			began := time.Now()
			if _, err := s.Search(ctx, req); err != nil {
				b.Fatal(err)
			}
			took[m] += time.Since(began)
		}
	}
	b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "ms-literal")
	b.ReportMetric(float64(took[1].Milliseconds())/float64(b.N), "ms-bm25")
	b.ReportMetric(float64(took[1])/float64(took[0]), "bm25-vs-literal")
}
