package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/e2e/internal/scale"
	"github.com/agentmem/agentmem/wordvec"
)

// The environment of BenchmarkSearchScale: comma-separated lists.
const (
	// scaleNotesEnv: sizes of the short-notes folder (filler notes; the
	// 20 needles come on top). Default 1000; "0" or "" for none.
	scaleNotesEnv = "AGENTMEM_SCALE"
	// scaleHistoryEnv: sizes of the rotated-history series (files of
	// about 64 KB). Default 20.
	scaleHistoryEnv = "AGENTMEM_SCALE_HISTORY"
	// scaleBackendsEnv: memstore, sqlite, postgres, dynamodb, firestore,
	// cosmosdb (all six by default; 10,000 and 100,000 files, which the
	// emulators take many minutes to load, are asked for with
	// AGENTMEM_SCALE).
	scaleBackendsEnv = "AGENTMEM_SCALE_BACKENDS"
	// scaleModesEnv: bm25, hybrid (both by default). Without hybrid the
	// store has no embedder and builds no vector index.
	scaleModesEnv = "AGENTMEM_SCALE_MODES"
	// scaleBoundsEnv: default (the notebook's MaxSearchFiles, 1,000, the
	// default), lifted (MaxSearchFiles = the folder's size). With the term
	// index MaxSearchFiles bounds only a scan (a folder's first search),
	// so lifted is asked for only to compare scans.
	scaleBoundsEnv = "AGENTMEM_SCALE_BOUNDS"
	// scaleWritersEnv: concurrent writers while loading. Default 8.
	scaleWritersEnv = "AGENTMEM_SCALE_WRITERS"
	// scaleLoadEnv: how the folder is loaded. "store" (the default): every
	// file through Store.Write, as an agent writes. "driver": the 20 needle
	// files through a store into the empty folder, then the filler through
	// the driver's CreateFile (one conditional create a file, no receipt,
	// no change feed), and the store measured opened afterwards, as a new
	// process meets a folder others filled: the way to 100,000 files on an
	// emulator whose cost per write grows with what it holds. BM25 only
	// (the vector index would need every file embedded through a store).
	scaleLoadEnv = "AGENTMEM_SCALE_LOAD"
)

// scaleSeed picks the corpus; scaleUser is the namespace searched.
const (
	scaleSeed = 36
	scaleUser = "kamal"
)

// scaleList returns the comma-separated values of env, or def when it is
// unset.
func scaleList(env, def string) []string {
	v, ok := os.LookupEnv(env)
	if !ok {
		v = def
	}
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func scaleSizes(b *testing.B, env, def string) []int {
	var out []int
	for _, f := range scaleList(env, def) {
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 0 {
			b.Fatalf("%s: %q is not a size (a comma-separated list of counts, as 1000,10000)", env, f)
		}
		if n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// scaleBackend opens a fresh, empty driver for one corpus; disk, when set,
// returns the bytes the backend keeps on disk.
type scaleBackend struct {
	open func(b *testing.B) (d driver.Driver, disk func() int64)
}

var scaleBackends = map[string]scaleBackend{
	"memstore": {func(b *testing.B) (driver.Driver, func() int64) { return open(b, "mem://"), nil }},
	"sqlite": {func(b *testing.B) (driver.Driver, func() int64) {
		db := filepath.Join(b.TempDir(), "memory.db")
		disk := func() int64 {
			var n int64
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if fi, err := os.Stat(db + suffix); err == nil {
					n += fi.Size()
				}
			}
			return n
		}
		return open(b, "sqlite://"+filepath.ToSlash(db)), disk
	}},
	"postgres":  {func(b *testing.B) (driver.Driver, func() int64) { return postgresDriver(b), nil }},
	"dynamodb":  {func(b *testing.B) (driver.Driver, func() int64) { return newDynamoDB(b), nil }},
	"firestore": {func(b *testing.B) (driver.Driver, func() int64) { return newFirestore(b), nil }},
	"cosmosdb":  {func(b *testing.B) (driver.Driver, func() int64) { return newCosmosDB(b), nil }},
}

// scaleEmbedder is module wordvec's offline embedder, loaded once.
var scaleEmbedder = sync.OnceValues(func() (search.Embedder, error) { return wordvec.New(context.Background(), nil) })

// BenchmarkSearchScale measures search_memory (the notebook's tool, as an
// agent calls it) over one user's folder as it grows (issue 36), per
// backend, corpus and size (e2e/internal/scale: notes-N is N short notes
// plus 20 needle notes, history-M is M rotated files of about 64 KB with
// the 20 needles inside), loading the folder once through the store
// (concurrent writes) and then, for each bound and mode, asking the 20
// needles' questions in turn, one per iteration:
//
//	.../load            load-s (writes), indexed-s (until the vector index is
//	                    whole: the background indexer, then Store.Reindex for
//	                    the files its bounded queue dropped, counted as
//	                    unindexed), files, heap-MB (Go heap in use after a GC),
//	                    rss-MB, index-B/file (vector index rows), disk-B/file (SQLite)
//	.../default-bm25    the notebook's default bounds (MaxSearchFiles 1,000)
//	.../lifted-bm25     MaxSearchFiles = the folder's size (AGENTMEM_SCALE_BOUNDS)
//	.../default-hybrid, .../lifted-hybrid   the same with module wordvec's embedder
//
// Each search leaf reports needles/20 (needles whose file is in the first
// 5 matches), p50-ms and p99-ms (of the iterations' searches), scanned
// (files the searches read, on average), req/search and rounds/search
// (backend calls and round trips, counted by contract.Counter),
// index-build-s (the warm-up: the first searches and the background work
// they start), and, at notes-N past 1,000 when the run measured
// notes-1000 too, p50-vs-1000 (the p50 over the same backend, bound and
// mode's at notes-1000). The first BM25 leaf of a folder, which builds its
// term index, also reports termindex-B/file (what the Go heap grew by
// over that build, after a GC, per file) and rss-MB (after it). The
// environment picks the sizes (AGENTMEM_SCALE, AGENTMEM_SCALE_HISTORY),
// backends, modes, bounds and writers; see docs/benchmarks.md for the
// 100,000-file run. Under make bench (-benchtime=200x) each leaf runs 200
// searches, 10 rounds of the 20 questions; use -benchtime=20x for one
// round on big folders.
func BenchmarkSearchScale(b *testing.B) {
	modes := scaleList(scaleModesEnv, "bm25,hybrid")
	bounds := scaleList(scaleBoundsEnv, "default")
	var corpora []scale.Corpus
	for _, n := range scaleSizes(b, scaleNotesEnv, "1000") {
		corpora = append(corpora, scale.Notes{N: n, Seed: scaleSeed})
	}
	for _, m := range scaleSizes(b, scaleHistoryEnv, "20") {
		corpora = append(corpora, scale.History{M: m, Seed: scaleSeed})
	}
	for _, name := range scaleList(scaleBackendsEnv, "memstore,sqlite,postgres,dynamodb,firestore,cosmosdb") {
		be, ok := scaleBackends[name]
		if !ok {
			b.Fatalf("%s: unknown backend %q (memstore, sqlite, postgres, dynamodb, firestore, cosmosdb)", scaleBackendsEnv, name)
		}
		b.Run(name, func(b *testing.B) {
			for _, c := range corpora {
				b.Run(scaleName(c), func(b *testing.B) {
					f := loadScale(b, name, be, c, slices.Contains(modes, string(search.Hybrid)))
					b.Run("load", func(b *testing.B) {
						for b.Loop() {
						}
						f.report(b)
					})
					for _, bound := range bounds {
						for _, mode := range modes {
							b.Run(bound+"-"+mode, func(b *testing.B) { f.search(b, bound, search.Mode(mode)) })
						}
					}
				})
			}
		})
	}
}

func scaleName(c scale.Corpus) string {
	switch c := c.(type) {
	case scale.Notes:
		return fmt.Sprintf("notes-%d", c.N)
	case scale.History:
		return fmt.Sprintf("history-%d", c.M)
	}
	return fmt.Sprintf("%T", c)
}

// scaleFixture is one loaded folder.
type scaleFixture struct {
	backend string
	c       scale.Corpus
	s       *store.Store
	raw     driver.Driver
	count   *contract.Counter
	// figures of the load
	load, indexed time.Duration
	heap, rss     uint64
	index         int64 // bytes of the vector index's rows (-1: not read)
	missed        int   // files the background indexer left for Reindex
	disk          int64 // bytes on disk (-1: not known)
	// searched: a search leaf has run (the folder's term index is built).
	searched bool
}

// scaleBase holds the p50 of each backend, bound and mode at notes-1000
// (milliseconds), for the ratio the bigger folders of the same run report.
var scaleBase = map[string]float64{}

// scaleBaseN is the folder size the ratio p50-vs-1000 is taken against.
const scaleBaseN = 1000

// loadScale writes c into a fresh driver of be through a store (with
// module wordvec's embedder when hybrid is measured) and waits for the
// vector index.
func loadScale(b *testing.B, backend string, be scaleBackend, c scale.Corpus, hybrid bool) *scaleFixture {
	ctx := b.Context()
	raw, disk := be.open(b)
	f := &scaleFixture{backend: backend, c: c, raw: raw, count: contract.NewCounter(raw), index: -1, disk: -1}
	var opts store.Options
	if hybrid {
		emb, err := scaleEmbedder()
		if err != nil {
			b.Fatal(err)
		}
		opts.Embedder = emb
	}
	writers := 8
	if v := os.Getenv(scaleWritersEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s: %q is not a positive count", scaleWritersEnv, v)
		}
		writers = n
	}
	began := time.Now()
	switch load := os.Getenv(scaleLoadEnv); load {
	case "", "store":
		f.s = store.New(f.count, &opts)
		b.Cleanup(func() { _ = f.s.Close() })
		if err := scale.Load(ctx, f.s, scale.Folder(scaleUser), c, writers); err != nil {
			b.Fatal(err)
		}
	case "driver":
		if hybrid {
			b.Fatalf("%s=driver loads for BM25 only: set %s=bm25", scaleLoadEnv, scaleModesEnv)
		}
		// The needles' store is closed with the driver, at the end.
		needles := store.New(raw, nil)
		b.Cleanup(func() { _ = needles.Close() })
		if err := scale.LoadDirect(ctx, needles, raw, scale.Folder(scaleUser), c, writers); err != nil {
			b.Fatal(err)
		}
		f.s = store.New(f.count, &opts)
		b.Cleanup(func() { _ = f.s.Close() })
	default:
		b.Fatalf("%s: unknown load %q (store, driver)", scaleLoadEnv, load)
	}
	f.load = time.Since(began)
	if err := f.s.WaitIndexed(ctx); err != nil {
		b.Fatal(err)
	}
	if hybrid {
		// The background queue drops what it cannot hold during a bulk
		// load (a search would repair it, a few files at a time): Reindex
		// completes the index, so that searches see it whole.
		st, err := f.s.Reindex(ctx, scale.Folder(scaleUser))
		if err != nil {
			b.Fatal(err)
		}
		f.missed = st.Files - st.Current
	}
	f.indexed = time.Since(began)
	f.heap, f.rss = heapInuse(), rss()
	if sr, ok := raw.(driver.ScopeReader); ok && hybrid {
		rows, err := sr.ReadScope(ctx, driver.ScopeParams{Prefix: scale.Folder(scaleUser) + search.IndexSegment + "/", Limit: c.Len() + 1, MaxChars: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		f.index = 0
		for _, r := range rows {
			f.index += int64(len(r.Content))
		}
	}
	if disk != nil {
		f.disk = disk()
	}
	b.Logf("loaded %d files in %v (indexed after %v); heap %d MB, RSS %d MB", c.Len(), f.load.Round(time.Millisecond), f.indexed.Round(time.Millisecond), f.heap>>20, f.rss>>20)
	return f
}

// heapInuse is the Go heap in use after a garbage collection.
func heapInuse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rss is the process's resident memory, from /proc (0 elsewhere).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (f *scaleFixture) report(b *testing.B) {
	n := float64(f.c.Len())
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(n, "files")
	b.ReportMetric(f.load.Seconds(), "load-s")
	b.ReportMetric(f.indexed.Seconds(), "indexed-s")
	b.ReportMetric(float64(f.heap)/(1<<20), "heap-MB")
	b.ReportMetric(float64(f.rss)/(1<<20), "rss-MB")
	if f.index >= 0 {
		b.ReportMetric(float64(f.index)/n, "index-B/file")
		b.ReportMetric(float64(f.missed), "unindexed")
	}
	if f.disk >= 0 {
		b.ReportMetric(float64(f.disk)/n, "disk-B/file")
	}
}

// search asks the needles' questions in turn, one per iteration, through
// a notebook with the bound ("default" or "lifted") and mode, and reports
// what it found and how long it took.
func (f *scaleFixture) search(b *testing.B, bound string, mode search.Mode) {
	ctx := b.Context()
	var lim memory.Limits
	switch bound {
	case "default":
	case "lifted":
		lim.MaxSearchFiles = f.c.Len()
	default:
		b.Fatalf("%s: unknown bound %q (default, lifted)", scaleBoundsEnv, bound)
	}
	m, err := memory.New(f.s, &memory.Options{SearchMode: mode, Limits: lim})
	if err != nil {
		b.Fatal(err)
	}
	needles := len(scale.Needles())
	answers := make([]*scale.Answer, needles)
	var durs []time.Duration
	scanned := 0
	// The folder's search index (and, for hybrid, its vector cache, which
	// follows the term index) is built by the first searches: measured
	// here once, untimed in the loop, as a long-lived server sees it.
	first := !f.searched && mode == search.BM25
	f.searched = true
	var heap0 uint64
	if first {
		// A search of an empty folder first loads what every search
		// shares (the analyzer's tables), so that only the index counts.
		if _, err := scale.Ask(ctx, m, scaleUser+"-empty", f.c, 0); err != nil {
			b.Fatal(err)
		}
		heap0 = heapInuse()
	}
	warm := time.Now()
	for range 2 {
		if _, err := scale.Ask(ctx, m, scaleUser, f.c, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.s.WaitIndexed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	built := time.Since(warm)
	// The first BM25 leaf of a folder builds its term index: what the heap
	// grew by is the index (and the notebook's small caches).
	var grown int64
	var rssBuilt uint64
	if first {
		grown, rssBuilt = int64(heapInuse())-int64(heap0), rss()
	}
	f.count.Reset()
	for b.Loop() {
		k := len(durs) % needles
		began := time.Now()
		a, err := scale.Ask(ctx, m, scaleUser, f.c, k)
		durs = append(durs, time.Since(began))
		if err != nil {
			b.Fatal(err)
		}
		answers[k] = &a
		scanned += a.Result.Scanned
	}
	calls, rounds := f.count.Total(), f.count.Rounds()
	// Fewer iterations than needles: ask the rest, untimed, to count them.
	for k := range answers {
		if answers[k] == nil {
			a, err := scale.Ask(ctx, m, scaleUser, f.c, k)
			if err != nil {
				b.Fatal(err)
			}
			answers[k] = &a
		}
	}
	found := 0
	var missed []string
	for k, a := range answers {
		if a.Found() {
			found++
		} else {
			missed = append(missed, fmt.Sprintf("%d (rank %d)", k, a.Rank))
		}
	}
	if len(missed) > 0 {
		b.Logf("%s %s: needles not in the first %d: %s", bound, mode, scale.TopK, strings.Join(missed, ", "))
	}
	slices.Sort(durs)
	pct := func(q float64) float64 {
		return float64(durs[min(len(durs)-1, int(q*float64(len(durs))))].Microseconds()) / 1000
	}
	n := float64(len(durs))
	b.ReportMetric(built.Seconds(), "index-build-s")
	if first { // b.Loop dropped what was reported before it
		b.ReportMetric(float64(grown)/float64(f.c.Len()), "termindex-B/file")
		b.ReportMetric(float64(rssBuilt)/(1<<20), "rss-MB")
	}
	b.ReportMetric(float64(found), "needles/20")
	b.ReportMetric(pct(0.50), "p50-ms")
	if notes, ok := f.c.(scale.Notes); ok {
		key := f.backend + "/" + bound + "/" + string(mode)
		switch {
		case notes.N == scaleBaseN:
			scaleBase[key] = pct(0.50)
		case notes.N > scaleBaseN && scaleBase[key] > 0:
			b.ReportMetric(pct(0.50)/scaleBase[key], "p50-vs-1000")
		}
	}
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(scanned)/n, "scanned")
	b.ReportMetric(float64(calls)/n, "req/search")
	b.ReportMetric(float64(rounds)/n, "rounds/search")
}
