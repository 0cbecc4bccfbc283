package wordvec_test

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/core/retrieval"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/wordvec"
)

// The committed conversation set of core/retrieval: 40 users, seed 28.
const convUsers, convSeed = 40, 28

// BenchmarkRetrievalHybrid reports search quality through search_memory
// with default limits for literal, BM25 and hybrid search (BM25 fused with
// this module's vectors) on dev.json (recall@1, recall@3, MRR) and on the
// conversation set (session recall@5, every evidence session in the first
// 5); ns/op is one search_memory call. It fails when dev.json cannot be
// found (core/retrieval.FindDevSet).
func BenchmarkRetrievalHybrid(b *testing.B) {
	path, err := retrieval.FindDevSet(".")
	if err != nil {
		b.Fatal(err)
	}
	dev, err := retrieval.LoadDevSet(path)
	if err != nil {
		b.Fatal(err)
	}
	emb, err := wordvec.New(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	conv := retrieval.Conversations(convUsers, convSeed)
	for _, set := range []retrieval.Set{dev, retrieval.Notes(), conv} {
		for _, m := range []store.SearchMode{store.SearchLiteral, store.SearchBM25, store.SearchHybrid} {
			opts := &store.Options{Embedder: emb}
			rep, err := retrieval.EvaluateWith(b.Context(), set, m, opts)
			if err != nil {
				b.Fatal(err)
			}
			r, err := retrieval.NewRunnerWith(b.Context(), set, m, opts)
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
