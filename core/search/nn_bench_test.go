package search

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// The nearest-neighbour benchmarks (issue 28, build item 4) measure the
// hybrid search's vector stage over one scope of 10,000 chunks of 100-d
// vectors: 1,000 files (the default search bound) of 10 chunks each. The
// same corpus, embedder and query are module contract's NNFile,
// NNEmbedder and NNQuery (core cannot import contract), which
// sqlite/nn_bench_test.go and firestore/nn_bench_test.go use to compare
// this path with the backends' native queries (vec1, FindNearest). Run
// with
//
//	AGENTMEM_BENCH_NN=1 go test -run '^$' -bench NN ./store/

const (
	nnFiles    = 1000
	nnSections = 10 // chunks per file
	nnVocab    = 3000
	nnQuery    = "w17 w230 w1999 w42 w808 w2500 w7 w1234"
)

// nnShapes are the corpus shapes, in words per chunk: 40 (about 230 runes
// a chunk; the search's analysis of the 1,000 files fits the store's
// cache) and 110 (about 650 runes; it did not fit before the cache was
// packed and made scan-resistant, and every search analysed every file).
var nnShapes = []int{40, 110}

// nnFile is file i: nnSections sections of words words drawn from a
// vocabulary of nnVocab, each section one chunk.
func nnFile(i, words int) string {
	r := rand.New(rand.NewPCG(uint64(i), 28))
	var sb strings.Builder
	for j := range nnSections {
		fmt.Fprintf(&sb, "## Part %d\n\n", j)
		for k := range words {
			if k > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "w%d", r.IntN(nnVocab))
		}
		sb.WriteString(".\n\n")
	}
	return sb.String()
}

// nnEmbedder is feature hashing of words into 100 signed dimensions.
type nnEmbedder struct{}

func (nnEmbedder) Model() string { return "nn-hash-100" }

func (nnEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 100)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			x := h.Sum32()
			if x&1 == 0 {
				v[(x>>1)%100]++
			} else {
				v[(x>>1)%100]--
			}
		}
		out[i] = v
	}
	return out, nil
}

// nnDriver is an in-memory driver (memstore imports this package, so the
// internal benchmark cannot use it): rows in a map, a sorted listing, and
// the scope read a search uses. Receipts are not needed here.
type nnDriver struct {
	mu   sync.Mutex
	rows map[string]driver.File
}

func (d *nnDriver) GetFile(_ context.Context, p string) (*driver.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.rows[p]; ok {
		return &f, nil
	}
	return nil, nil
}

func (d *nnDriver) sorted(prefix string) []string {
	var ps []string
	for p := range d.rows {
		if strings.HasPrefix(p, prefix) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

func (d *nnDriver) ListFiles(_ context.Context, p driver.ListParams) ([]driver.Entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driver.Entry
	for _, path := range d.sorted(p.Prefix) {
		if path > p.After && len(out) < p.Limit {
			out = append(out, driver.Entry{Path: path, Tombstone: d.rows[path].Tombstone})
		}
	}
	return out, nil
}

func (d *nnDriver) CreateFile(_ context.Context, f driver.File) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.rows[f.Path]; ok {
		return driver.ErrPrecondition
	}
	d.rows[f.Path] = f
	return nil
}

func (d *nnDriver) ReplaceFile(_ context.Context, f driver.File, expected string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.rows[f.Path]; !ok || old.Version != expected {
		return driver.ErrPrecondition
	}
	d.rows[f.Path] = f
	return nil
}

func (d *nnDriver) DeleteFile(_ context.Context, p, expected string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.rows[p]; !ok || old.Version != expected {
		return driver.ErrPrecondition
	}
	delete(d.rows, p)
	return nil
}

func (d *nnDriver) GetReceipt(context.Context, string) (*driver.Receipt, error) { return nil, nil }
func (d *nnDriver) ReserveReceipt(context.Context, driver.Receipt) error        { return nil }
func (d *nnDriver) CompleteReceipt(context.Context, driver.Receipt) error       { return nil }
func (d *nnDriver) DropReceipt(context.Context, string, string) error           { return nil }
func (d *nnDriver) Close() error                                                { return nil }

func (d *nnDriver) ReadScope(_ context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driver.ScopeFile
	for _, path := range d.sorted(p.Prefix) {
		f := d.rows[path]
		if f.Tombstone || strings.Contains(path[len(p.Prefix):], "/") || len(out) == p.Limit {
			continue
		}
		content, cut := driver.CutRunes(f.Content, p.MaxChars)
		out = append(out, driver.ScopeFile{Path: path, Content: content, Truncated: cut, Version: f.Version})
	}
	return out, nil
}

// nnStore returns a store over an in-memory driver holding the indexed
// corpus.
func nnStore(b *testing.B, words int) (*testStore, *nnDriver) {
	ctx := b.Context()
	d := &nnDriver{rows: map[string]driver.File{}}
	for i := range nnFiles {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%04d.md", i), Content: nnFile(i, words), Version: fmt.Sprint("v", i)}); err != nil {
			b.Fatal(err)
		}
	}
	s := newTestStore(d, &Options{Embedder: nnEmbedder{}})
	b.Cleanup(func() { _ = s.Close() })
	if _, err := s.Reindex(ctx, "u/main/"); err != nil {
		b.Fatal(err)
	}
	return s, d
}

func nnRequest(m Mode) Request {
	return Request{Prefix: "u/main/", Query: nnQuery, Mode: m, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}
}

// BenchmarkNNVectorStage is the Go baseline: the vector stage exactly as
// searchHybrid runs it (the scope's index rows read with one ReadScope,
// decoded through the analysis cache, every chunk of every candidate
// scored), then "slab": the floor of any exact in-process scan (10,000
// pre-decoded vectors in one []float32, dot products and a top-10), and
// the whole search in both modes for scale. The file reads are outside the
// vector stage (BM25 needs them either way).
func BenchmarkNNVectorStage(b *testing.B) {
	if os.Getenv("AGENTMEM_BENCH_NN") == "" {
		b.Skip("set AGENTMEM_BENCH_NN=1 to run the 10,000-chunk nearest-neighbour comparison (slow; docs/search.md)")
	}
	for _, words := range nnShapes {
		b.Run(fmt.Sprintf("words=%d", words), func(b *testing.B) { benchNNVectorStage(b, words) })
	}
}

func benchNNVectorStage(b *testing.B, words int) {
	ctx := b.Context()
	s, _ := nnStore(b, words)
	model := s.embedder.Model()
	r := nnRequest(Hybrid)
	cands, _, err := s.candidates(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	recs, err := s.readIndexScope(ctx, r.Prefix, r.MaxFiles+1, model)
	if err != nil {
		b.Fatal(err)
	}
	chunks := 0
	for _, ix := range recs {
		chunks += len(ix)
	}
	if len(cands) != nnFiles || chunks != nnFiles*nnSections {
		b.Fatalf("%d files, %d chunks; want %d, %d", len(cands), chunks, nnFiles, nnFiles*nnSections)
	}
	lex := map[string]int{}
	nnMeasure(b, "go-scope", func(b *testing.B) {
		recs, err := s.readIndexScope(ctx, r.Prefix, r.MaxFiles+1, model)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.vectorScores(ctx, ctx, r.Query, nil, cands, recs, lex); err != nil {
			b.Fatal(err)
		}
	})
	slab := make([]float32, 0, chunks*100)
	for _, ix := range recs {
		for _, v := range ix {
			slab = append(slab, v...)
		}
	}
	qv, err := embedQuery(ctx, s.embedder, r.Query)
	if err != nil {
		b.Fatal(err)
	}
	nnMeasure(b, "slab", func(b *testing.B) { nnTopK(slab, qv, 10) })
	for _, m := range []Mode{BM25, Hybrid} {
		nnMeasure(b, "search-"+string(m), func(b *testing.B) {
			if _, err := s.Search(ctx, nnRequest(m)); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// nnMeasure runs op once untimed (to warm the store's caches), then as
// benchmark name, reporting allocations and cpu-ns/op (the process's CPU
// time per op, steadier than ns/op on a shared machine).
func nnMeasure(b *testing.B, name string, op func(b *testing.B)) {
	b.Run(name, func(b *testing.B) {
		op(b)
		b.ReportAllocs()
		cpu := nnCPU()
		for b.Loop() {
			op(b)
		}
		b.ReportMetric(float64((nnCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// nnTopK returns the offsets of the k vectors of slab nearest to q (by
// dot product), best first.
func nnTopK(slab, q []float32, k int) []int {
	type hit struct {
		at  int
		dot float32
	}
	top := make([]hit, 0, k+1)
	d := len(q)
	for at := 0; at+d <= len(slab); at += d {
		v := slab[at : at+d]
		var dot float32
		for i, x := range q {
			dot += x * v[i]
		}
		if len(top) == k && dot <= top[k-1].dot {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, dot, func(h hit, t float32) int { return cmp.Compare(t, h.dot) })
		top = slices.Insert(top, i, hit{at / d, dot})
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]int, len(top))
	for i, h := range top {
		out[i] = h.at
	}
	return out
}
