package retrieval

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/wordvec"
)

// BenchmarkRetrievalHybrid reports search quality through search_memory
// with default limits for literal, BM25 and hybrid search (BM25 fused with
// module wordvec's vectors) on dev.json (recall@1, recall@3, MRR) and on the
// conversation set (session recall@5, every evidence session in the first
// 5); ns/op is one search_memory call. It fails when dev.json cannot be
// found ([FindDevSet]).
func BenchmarkRetrievalHybrid(b *testing.B) {
	path, err := FindDevSet(".")
	if err != nil {
		b.Fatal(err)
	}
	dev, err := LoadDevSet(path)
	if err != nil {
		b.Fatal(err)
	}
	emb, err := wordvec.New(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	conv := Conversations(convUsers, convSeed)
	for _, set := range []Set{dev, Notes(), conv} {
		for _, m := range []store.SearchMode{store.SearchLiteral, store.SearchBM25, store.SearchHybrid} {
			opts := &store.Options{Embedder: emb}
			rep, err := EvaluateWith(b.Context(), set, m, opts)
			if err != nil {
				b.Fatal(err)
			}
			r, err := NewRunnerWith(b.Context(), set, m, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", set.Name, m), func(b *testing.B) {
				if b.N == 1 { // logged on the first run
					rep.Log(b, set.Name, fmt.Sprint(m))
				}
				rep.ReportMetrics(b)
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
