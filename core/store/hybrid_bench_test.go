package store_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
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
// index off and on, one write of each alternately so that both see the
// same machine (ns-off/op, ns-on/op, vs-off): "spaced" waits (untimed)
// after each pair until the index is fresh, as between an agent's turns;
// "back-to-back" does not, so the indexer runs beside the writes. Spaced
// also reports the embedding calls per unchanged rewrite (0) and index
// bytes per chunk.
func BenchmarkIndexedWrite(b *testing.B) {
	for _, pace := range []string{"spaced", "back-to-back"} {
		b.Run(pace, func(b *testing.B) {
			ctx := b.Context()
			emb := &countingEmbedder{}
			type side struct {
				d       *memstore.Driver
				s       *store.Store
				version string
				elapsed time.Duration
			}
			var sides []*side
			for _, opts := range []*store.Options{{}, {Embedder: emb}} {
				d := newMemDriver(b)
				sd := &side{d: d, s: store.New(d, opts)}
				defer sd.s.Close()
				sides = append(sides, sd)
			}
			off, on := sides[0], sides[1]
			for i := range b.N {
				order := sides
				if i%2 == 1 { // the first write after a wait pays for it: take turns
					order = []*side{on, off}
				}
				for _, sd := range order {
					began := time.Now()
					m, err := sd.s.Write(ctx, store.WriteRequest{Path: "u/main/note.md", Content: benchNote(i), Expected: sd.version,
						Operation: &store.Operation{ID: fmt.Sprintf("op-%d", i), Fingerprint: "f"}})
					sd.elapsed += time.Since(began)
					if err != nil {
						b.Fatal(err)
					}
					sd.version = m.Version
				}
				if pace == "spaced" {
					b.StopTimer()
					if err := on.s.WaitIndexed(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(off.elapsed.Nanoseconds())/n, "ns-off/op")
			b.ReportMetric(float64(on.elapsed.Nanoseconds())/n, "ns-on/op")
			b.ReportMetric(float64(on.elapsed)/float64(off.elapsed), "vs-off")
			if pace != "spaced" {
				return
			}
			before := emb.texts.Load()
			f, _ := on.s.Read(ctx, "u/main/note.md", 1<<20)
			if _, err := on.s.Write(ctx, store.WriteRequest{Path: f.Path, Content: f.Content, Expected: f.Version}); err != nil {
				b.Fatal(err)
			}
			_ = on.s.WaitIndexed(ctx)
			b.ReportMetric(float64(emb.texts.Load()-before), "embeds/unchanged-rewrite")
			row, _ := on.d.GetFile(ctx, "u/main/"+search.IndexSegment+"/note.md")
			chunks := strings.Count(row.Content, `"h":`)
			b.ReportMetric(float64(len(row.Content))/float64(max(chunks, 1)), "index-bytes/chunk")
		})
	}
}

// BenchmarkHybridSearch reports a search over 1,000 indexed files in one
// scope: literal, BM25 and hybrid (every vector fresh).
func BenchmarkHybridSearch(b *testing.B) {
	ctx := b.Context()
	d := newMemDriver(b)
	s := store.New(d, &store.Options{Embedder: &countingEmbedder{}})
	defer s.Close()
	for i := range 1000 {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%04d.md", i), Content: benchNote(i), Version: fmt.Sprintf("v%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	// One search repairs 64 chunks; the rest are indexed behind it.
	for range 40 {
		if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "cat project", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
			b.Fatal(err)
		}
		if err := s.WaitIndexed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range []search.Mode{search.Literal, search.BM25, search.Hybrid} {
		b.Run(string(m), func(b *testing.B) {
			for range b.N {
				if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "which city does the cat live in", Mode: m, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
