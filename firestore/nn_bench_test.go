package firestore_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	gcfirestore "cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// The nearest-neighbour benchmarks (issue 28, build item 4) on the
// emulator: one scope of 10,000 chunks of 100-d vectors (1,000 files of 10
// chunks of 40 words, the corpus of core/store/nn_bench_test.go and
// sqlite/nn_bench_test.go), searched the way the store does today (its
// index rows read with one ReadScope query, decoded and scored in Go) and
// with Query.FindNearest over one document per chunk (the emulator needs
// no vector index; production needs a composite (scope, v VECTOR(100))
// one). Run with
//
//	AGENTMEM_BENCH_NN=1 go test -run '^$' -bench NN -benchtime 10x .

// The shared corpus (module contract's NN names).
const (
	nnFiles    = contract.NNFiles
	nnSections = contract.NNSections
	nnQuery    = contract.NNQuery
	nnK        = contract.NNK
)

// BenchmarkNN compares, over one scope of 10,000 chunks:
//
//	today/read-index  the vector stage's read: the scope's 1,000 index rows
//	                  with one ReadScope (decoding is cached by the store
//	                  and scoring is in Go: core's BenchmarkNNVectorStage)
//	today/search-*    the whole search, BM25 alone and hybrid
//	fn-write          keeping a chunk collection: one file's 10 chunk
//	                  documents set in one batched commit
//	findnearest       top-10 by FindNearest (dot product; the vectors are
//	                  unit length) with scope == the folder
//	stamps            one document per file holding its chunk hashes, read
//	                  with scope == the folder: what a native path still
//	                  needs to find the files the index lacks
//	e2e-findnearest   a hybrid search on the native path: the BM25 search,
//	                  the top-10 and the stamps, in turn
//	*+others          the same after 10,000 chunks of another tenant
//
// rpc/op counts gRPC calls; recall is the top-10's overlap with the exact
// one.
func BenchmarkNN(b *testing.B) {
	if os.Getenv("AGENTMEM_BENCH_NN") == "" {
		b.Skip("set AGENTMEM_BENCH_NN=1 to run the 10,000-chunk nearest-neighbour comparison (slow; docs/search.md)")
	}
	const words = 40
	client, c := countingClient(b)
	ctx := b.Context()
	d, err := firestore.New(ctx, client, "nn-"+firestore.RandomID(), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := store.New(d, &store.Options{Embedder: contract.NNEmbedder{}})
	defer s.Close()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%04d.md", i), Content: contract.NNFile(i, words), Version: fmt.Sprint("v", i)}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range nnFiles {
		next <- i
	}
	close(next)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	if _, err := s.Reindex(ctx, "u/main/"); err != nil {
		b.Fatal(err)
	}
	indexRead := driver.ScopeParams{Prefix: "u/main/" + search.IndexSegment + "/", Limit: nnFiles + 1, MaxChars: 300_001}
	rows, err := d.ReadScope(ctx, indexRead)
	if err != nil {
		b.Fatal(err)
	}
	chunks := contract.DecodeNNChunks(b, rows)
	if len(rows) != nnFiles || len(chunks) != nnFiles*nnSections {
		b.Fatalf("%d index rows, %d chunks; want %d, %d", len(rows), len(chunks), nnFiles, nnFiles*nnSections)
	}
	qs, _ := contract.NNEmbedder{}.Embed(ctx, []string{nnQuery})
	q := contract.NNUnit(qs[0])
	exact := contract.NNExact(chunks, q, nnK)

	measure := func(name string, fn func(b *testing.B) map[string]bool) {
		b.Run(name, func(b *testing.B) {
			fn(b) // warm the store's caches, untimed
			b.ReportAllocs()
			clear(c.byMethod)
			c.on.Store(true)
			var got map[string]bool
			for b.Loop() {
				got = fn(b)
			}
			c.on.Store(false)
			reportRPCs(b, c)
			if got != nil {
				n := 0
				for id := range got {
					if exact[id] {
						n++
					}
				}
				b.ReportMetric(float64(n)/nnK, "recall")
			}
		})
	}
	measure("today/read-index", func(b *testing.B) map[string]bool {
		if _, err := d.ReadScope(ctx, indexRead); err != nil {
			b.Fatal(err)
		}
		return nil
	})
	find := func(m search.Mode) func(b *testing.B) map[string]bool {
		return func(b *testing.B) map[string]bool {
			if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: nnQuery, Mode: m, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
				b.Fatal(err)
			}
			return nil
		}
	}
	for _, m := range []search.Mode{search.BM25, search.Hybrid} {
		measure("today/search-"+string(m), find(m))
	}

	vecs := client.Collection(d.Collection().ID + "-nn")
	stampDocs := client.Collection(d.Collection().ID + "-nnfiles")
	docID := func(scope, p, h string) string { return strings.ReplaceAll(scope+p, "/", "|") + "|" + h }
	files := slices.Collect(func(yield func([]contract.NNChunk) bool) {
		for i := 0; i < len(chunks); i += nnSections {
			if !yield(chunks[i : i+nnSections]) {
				return
			}
		}
	})
	// put writes files' chunk documents (and, with stamps, one document
	// per file) in batched commits of at most 500 writes: one commit per
	// file for one file. (The emulator refuses BulkWriter's BatchWrite
	// without admin credentials.)
	put := func(b *testing.B, scope string, withStamps bool, fs ...[]contract.NNChunk) {
		var batch *gcfirestore.WriteBatch
		n := 0
		flush := func() {
			if n > 0 {
				if _, err := batch.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			batch, n = client.Batch(), 0
		}
		flush()
		for _, f := range fs {
			if n+len(f)+1 > 500 {
				flush()
			}
			hs := make([]string, len(f))
			for i, ch := range f {
				batch.Set(vecs.Doc(docID(scope, ch.Path, ch.Hash)), map[string]any{"scope": scope, "path": ch.Path, "hash": ch.Hash, "v": gcfirestore.Vector32(ch.Vec)})
				hs[i] = ch.Hash
			}
			n += len(f)
			if withStamps {
				batch.Set(stampDocs.Doc(docID(scope, f[0].Path, "")), map[string]any{"scope": scope, "path": f[0].Path, "hashes": strings.Join(hs, " ")})
				n++
			}
		}
		flush()
	}
	i := 0
	measure("fn-write", func(b *testing.B) map[string]bool {
		i++
		put(b, fmt.Sprintf("w%d/main/", i), false, files[i%len(files)])
		return nil
	})
	put(b, "u/main/", true, files...)
	nearest := func(b *testing.B) map[string]bool {
		docs, err := vecs.Where("scope", "==", "u/main/").FindNearest("v", gcfirestore.Vector32(q), nnK, gcfirestore.DistanceMeasureDotProduct, nil).Documents(ctx).GetAll()
		if err != nil {
			b.Fatal(err)
		}
		got := map[string]bool{}
		for _, doc := range docs {
			p, _ := doc.Data()["path"].(string)
			h, _ := doc.Data()["hash"].(string)
			got[p+"#"+h] = true
		}
		if len(got) != nnK {
			b.Fatalf("%d results, want %d", len(got), nnK)
		}
		return got
	}
	stamps := func(b *testing.B) map[string]bool {
		docs, err := stampDocs.Where("scope", "==", "u/main/").Documents(ctx).GetAll()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, doc := range docs {
			h, _ := doc.Data()["hashes"].(string)
			n += strings.Count(h, " ") + 1
		}
		if n != nnFiles*nnSections {
			b.Fatalf("%d chunk hashes, want %d", n, nnFiles*nnSections)
		}
		return nil
	}
	bm25 := find(search.BM25)
	e2e := func(b *testing.B) map[string]bool {
		bm25(b)
		got := nearest(b)
		stamps(b)
		return got
	}
	run := func(suffix string) {
		measure("findnearest"+suffix, nearest)
		measure("stamps"+suffix, stamps)
		measure("e2e-findnearest"+suffix, e2e)
	}
	run("")
	put(b, "o/main/", true, files...)
	run("+others")
}
