package retrieval

import (
	"testing"

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
	benchmark(b, []store.SearchMode{store.SearchLiteral, store.SearchBM25, store.SearchHybrid}, &store.Options{Embedder: emb})
}
