package store_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	stdatomic "sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// countingEmbedder is a hashed bag of words in 100 dimensions that counts
// the texts it embeds.
type countingEmbedder struct{ texts stdatomic.Int64 }

func (e *countingEmbedder) Model() string { return "bench-1" }

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 100)
		v[0] = 0.01
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[1+h.Sum32()%99]++
		}
		out[i] = v
	}
	return out, nil
}

func benchNote(i int) string {
	return fmt.Sprintf("# Note %d\n\n- Lives in city %d with a cat.\n- Works on project %d.\n\n%s\n", i, i%37, i%11, strings.Repeat(fmt.Sprintf("Detail %d about the week. ", i), 20))
}

// BenchmarkIndexedWrite reports an idempotent write's latency with the
// index off and on (the indexer runs behind it), the embedding calls per
// unchanged rewrite (0) and per changed write, and index bytes per chunk.
func BenchmarkIndexedWrite(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("index=%v", on), func(b *testing.B) {
			emb := &countingEmbedder{}
			opts := &store.Options{}
			if on {
				opts.Embedder = emb
			}
			d := memstore.New()
			s := store.New(d, opts)
			defer s.Close()
			ctx := b.Context()
			v := ""
			for i := range b.N {
				m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/note.md", Content: benchNote(i), Expected: v,
					Operation: &store.Operation{ID: fmt.Sprintf("op-%d", i), Fingerprint: "f"}})
				if err != nil {
					b.Fatal(err)
				}
				v = m.Version
			}
			b.StopTimer()
			if !on {
				return
			}
			if err := s.WaitIndexed(ctx); err != nil {
				b.Fatal(err)
			}
			before := emb.texts.Load()
			f, _ := s.Read(ctx, "u/main/note.md", 1<<20)
			if _, err := s.Write(ctx, store.WriteRequest{Path: f.Path, Content: f.Content, Expected: f.Version}); err != nil {
				b.Fatal(err)
			}
			_ = s.WaitIndexed(ctx)
			b.ReportMetric(float64(emb.texts.Load()-before), "embeds/unchanged-rewrite")
			row, _ := d.GetFile(ctx, "u/main/"+store.IndexSegment+"/note.md")
			chunks := strings.Count(row.Content, `"h":`)
			b.ReportMetric(float64(len(row.Content))/float64(max(chunks, 1)), "index-bytes/chunk")
		})
	}
}

// BenchmarkHybridSearch reports a search over 1,000 indexed files in one
// scope: literal, BM25 and hybrid (every vector fresh).
func BenchmarkHybridSearch(b *testing.B) {
	ctx := b.Context()
	d := memstore.New()
	s := store.New(d, &store.Options{Embedder: &countingEmbedder{}})
	defer s.Close()
	for i := range 1000 {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%04d.md", i), Content: benchNote(i), Version: fmt.Sprintf("v%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	// One search repairs 64 chunks; the rest are indexed behind it.
	for range 40 {
		if _, err := s.Search(ctx, store.SearchRequest{Prefix: "u/main/", Query: "cat project", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
			b.Fatal(err)
		}
		if err := s.WaitIndexed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range []store.SearchMode{store.SearchLiteral, store.SearchBM25, store.SearchHybrid} {
		b.Run(string(m), func(b *testing.B) {
			for range b.N {
				if _, err := s.Search(ctx, store.SearchRequest{Prefix: "u/main/", Query: "which city does the cat live in", Mode: m, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
