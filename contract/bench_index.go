package contract

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// BenchIndexedWrite measures what the search index costs an idempotent
// write (a compare-and-swap write with an operation, as write_memory makes,
// each changing one chunk of the file), as one sub-benchmark per pace:
//
//   - "spaced": writes as an agent makes them, one per turn: after each pair
//     the benchmark waits, untimed, until the index is fresh (an agent's
//     turn is far longer than the indexing);
//   - "back-to-back": no wait, so the indexer of the store with the index
//     on runs while both stores write.
//
// Each iteration makes one write through a store with the index off and
// one through a store with a [FakeEmbedder], alternately, so that both see
// the same machine. It reports ns-off/op, ns-on/op and vs-off, their
// ratio; for "spaced", index-ms (how long after a write its index is
// fresh, the wait included), embeds/write (the changed chunks: 1),
// embeds/unchanged-rewrite (0) and index-bytes/chunk. newDriver returns a
// fresh, empty driver for each store; the benchmark closes it.
func BenchIndexedWrite(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	const p = "bench/main/indexed.md"
	for _, pace := range writePaces {
		b.Run(pace, func(b *testing.B) {
			emb := &FakeEmbedder{}
			open := func(on bool) *writeSide {
				opts := &store.Options{}
				if on {
					opts.Embedder = emb
				}
				sd := newWriteSide(b, newDriver(b), opts, p)
				if err := sd.s.WaitIndexed(b.Context()); err != nil {
					b.Fatal(err)
				}
				return sd
			}
			off, on := open(false), open(true)
			_, before := emb.Counts()
			indexing := alternateWrites(b, pace, off, on)
			if pace != "spaced" {
				return
			}
			_, after := emb.Counts()
			n := float64(b.N)
			b.ReportMetric(float64(indexing.Microseconds())/n/1000, "index-ms")
			b.ReportMetric(float64(after-before)/n, "embeds/write")
			ctx := b.Context()
			f, err := on.s.Read(ctx, p, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := on.s.Write(ctx, store.WriteRequest{Path: p, Content: f.Content, Expected: f.Version}); err != nil {
				b.Fatal(err)
			}
			if err := on.s.WaitIndexed(ctx); err != nil {
				b.Fatal(err)
			}
			_, rewritten := emb.Counts()
			b.ReportMetric(float64(rewritten-after), "embeds/unchanged-rewrite")
			row, err := on.raw.GetFile(ctx, "bench/main/"+search.IndexSegment+"/indexed.md")
			if err != nil || row == nil {
				b.Fatalf("the index row: %v, %v", row, err)
			}
			b.ReportMetric(float64(len(row.Content))/float64(max(strings.Count(row.Content, `"h":`), 1)), "index-bytes/chunk")
		})
	}
}

// writePaces are the paces of [BenchIndexedWrite] and
// [BenchTermIndexedWrite]: "spaced" waits, untimed, after each pair of
// writes until the store with the index is idle; "back-to-back" does not.
var writePaces = []string{"spaced", "back-to-back"}

// writeSide is one of the two stores a write benchmark compares: the file
// it rewrites, the file's version, the time its writes took.
type writeSide struct {
	s       *store.Store
	raw     driver.Driver
	path    string
	version string
	elapsed time.Duration
}

// newWriteSide opens a store over raw with opts (closed when b ends) and
// writes p's first version through it.
func newWriteSide(b *testing.B, raw driver.Driver, opts *store.Options, p string) *writeSide {
	sd := &writeSide{s: store.New(raw, opts), raw: raw, path: p}
	b.Cleanup(func() { _ = sd.s.Close() })
	m, err := sd.s.Write(b.Context(), store.WriteRequest{Path: p, Content: indexedNote(0)})
	if err != nil {
		b.Fatal(err)
	}
	sd.version = m.Version
	return sd
}

// alternateWrites makes b.N idempotent compare-and-swap writes (an
// operation each, as write_memory makes them, one chunk changed) of each
// side's file, one through off and one through on per iteration, in turns,
// so that both see the same machine; at the "spaced" pace it waits after
// each pair, untimed, until on's background work is done (WaitIndexed)
// and returns how long those waits took. It reports ns-off/op, ns-on/op
// and vs-off, their ratio.
func alternateWrites(b *testing.B, pace string, off, on *writeSide) time.Duration {
	ctx := b.Context()
	var indexing time.Duration
	b.ResetTimer()
	for i := range b.N {
		order := []*writeSide{off, on}
		if i%2 == 1 { // the first write after a wait pays for it: take turns
			order = []*writeSide{on, off}
		}
		for _, sd := range order {
			began := time.Now()
			m, err := sd.s.Write(ctx, store.WriteRequest{Path: sd.path, Content: indexedNote(i + 1), Expected: sd.version,
				Operation: &store.Operation{ID: fmt.Sprintf("bench/%p/%s/%d", sd, pace, i), Fingerprint: "fp"}})
			sd.elapsed += time.Since(began)
			if err != nil {
				b.Fatal(err)
			}
			sd.version = m.Version
		}
		if pace == "spaced" {
			b.StopTimer()
			began := time.Now()
			if err := on.s.WaitIndexed(ctx); err != nil {
				b.Fatal(err)
			}
			indexing += time.Since(began)
			b.StartTimer()
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(off.elapsed.Nanoseconds())/n, "ns-off/op")
	b.ReportMetric(float64(on.elapsed.Nanoseconds())/n, "ns-on/op")
	b.ReportMetric(float64(on.elapsed)/float64(off.elapsed), "vs-off")
	return indexing
}

// termIndexFolder is the folder of [BenchTermIndexedWrite]'s notes and
// termIndexFiles their number (the file it rewrites comes on top).
const (
	termIndexFolder = "bench/main/"
	termIndexFiles  = 1000
)

// BenchTermIndexedWrite measures what the term index costs a write: one
// folder of 1,000 short notes (written behind the store, as a store opened
// over an existing memory finds them) in each of two stores without an
// embedder; the folder of one ("on") has been searched (BM25), so its term
// index is built and the store's change feed keeps it on every write, the
// folder of the other ("off") never has, so it has no index. Each
// iteration rewrites one more note of the folder through each store, as
// [BenchIndexedWrite] does, per pace: "spaced" waits after each pair,
// untimed, until the feed has applied the write (index-ms: that wait);
// "back-to-back" lets the feed run while both stores write. It reports
// ns-off/op, ns-on/op and vs-off, their ratio, and fails when the
// folder's index is not live after the writes (a search fell back to a
// scan). newDriver returns a fresh, empty driver for each store; the
// benchmark closes it.
func BenchTermIndexedWrite(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	const p = termIndexFolder + "indexed.md"
	ctx := b.Context()
	searchSide := func(sd *writeSide) search.Result {
		res, err := sd.s.Search(ctx, search.Request{Prefix: termIndexFolder, Query: "which city does the cat live in",
			Mode: search.BM25, Limit: 5, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 65536})
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	open := func(searched bool) *writeSide {
		raw := newDriver(b)
		createNotes(b, raw, termIndexFolder, termIndexFiles)
		sd := newWriteSide(b, raw, nil, p)
		if searched {
			// The first search builds the folder's index (it scans meanwhile).
			searchSide(sd)
			if err := sd.s.WaitIndexed(ctx); err != nil {
				b.Fatal(err)
			}
			if res := searchSide(sd); res.Fallback != "" || res.Scanned != termIndexFiles+1 {
				b.Fatalf("after the first search the folder's index should answer for %d files: scanned %d, fallback %q", termIndexFiles+1, res.Scanned, res.Fallback)
			}
		}
		return sd
	}
	off, on := open(false), open(true)
	for _, pace := range writePaces {
		b.Run(pace, func(b *testing.B) {
			off.elapsed, on.elapsed = 0, 0
			indexing := alternateWrites(b, pace, off, on)
			if pace == "spaced" {
				b.ReportMetric(float64(indexing.Microseconds())/float64(b.N)/1000, "index-ms")
			}
			if err := on.s.WaitIndexed(ctx); err != nil {
				b.Fatal(err)
			}
			if res := searchSide(on); res.Fallback != "" {
				b.Fatalf("the folder's index is no longer live after the writes: %q", res.Fallback)
			}
		})
	}
}

// benchNote is short note i of a benchmark's folder: a city, a project,
// some repeated detail.
func benchNote(i int) string {
	return fmt.Sprintf("# Note %d\n\n- Lives in city %d with a cat.\n- Works on project %d.\n\n%s\n", i, i%37, i%11,
		strings.Repeat(fmt.Sprintf("Detail %d about the week and the trip. ", i), 15))
}

// createNotes creates n files of [benchNote] in folder (n0000.md on)
// directly in raw, behind any store, with a few concurrent writers.
func createNotes(b *testing.B, raw driver.Driver, folder string, n int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := raw.CreateFile(b.Context(), driver.File{Path: fmt.Sprintf("%sn%04d.md", folder, i), Content: benchNote(i), Version: fmt.Sprintf("v%d", i)}); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// indexedNote is a note of five sections (several chunks) whose last
// line changes with i: one chunk changes.
func indexedNote(i int) string {
	var sb strings.Builder
	for sec := range 5 {
		fmt.Fprintf(&sb, "## Section %d\n\n", sec)
		for k := range 12 {
			fmt.Fprintf(&sb, "- Fact %d of section %d: the user prefers window seats and early trains. ", k, sec)
			if sec == 4 && k == 11 {
				fmt.Fprintf(&sb, "Revision %d.", i)
			}
			sb.WriteString("\n")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// BenchHybridSearch measures a search over one scope of 1,000 files with
// the index warm (every file's vectors written), in the three modes; each
// iteration runs one search of each mode, alternately, so that all three
// see the same machine. It reports ms-literal, ms-bm25, ms-hybrid and the
// ratios bm25-vs-literal and hybrid-vs-literal, and embeds/search (the
// texts a hybrid search embedded: the query alone, 1, when the index is
// warm). newDriver returns a fresh,
// empty driver; the benchmark closes it.
func BenchHybridSearch(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	ctx := b.Context()
	raw := newDriver(b)
	emb := &FakeEmbedder{}
	s := store.New(raw, &store.Options{Embedder: emb})
	b.Cleanup(func() { _ = s.Close() })
	for i := range 1000 {
		content := benchNote(i)
		if i%10 == 0 { // a long one: a session of a conversation, several chunks
			for t := range 30 {
				content += fmt.Sprintf("User: what about day %d of trip %d?\nAssistant: On day %d we go to the museum.\n", t, i, t)
			}
		}
		if err := raw.CreateFile(ctx, driver.File{Path: fmt.Sprintf("bench/main/n%04d.md", i), Content: content, Version: fmt.Sprintf("v%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	req := func(m search.Mode) search.Request {
		return search.Request{Prefix: "bench/main/", Query: "which city does the cat live in", Mode: m,
			Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}
	}
	// The first hybrid search queues every file for indexing (files written
	// behind the store's back); once they are indexed the index is warm.
	if _, err := s.Search(ctx, req(search.Hybrid)); err != nil {
		b.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		b.Fatal(err)
	}
	modes := []search.Mode{search.Literal, search.BM25, search.Hybrid}
	elapsed := make([]time.Duration, len(modes))
	_, before := emb.Counts()
	b.ResetTimer()
	for range b.N {
		for k, m := range modes {
			began := time.Now()
			res, err := s.Search(ctx, req(m))
			elapsed[k] += time.Since(began)
			if err != nil {
				b.Fatal(err)
			}
			if res.Scanned != 1000 {
				b.Fatalf("%s scanned %d files, want 1000", m, res.Scanned)
			}
		}
	}
	b.StopTimer()
	n := float64(b.N)
	_, after := emb.Counts()
	b.ReportMetric(float64(after-before)/n, "embeds/search")
	for k, m := range modes {
		b.ReportMetric(float64(elapsed[k].Microseconds())/n/1000, "ms-"+string(m))
	}
	b.ReportMetric(float64(elapsed[1])/float64(elapsed[0]), "bm25-vs-literal")
	b.ReportMetric(float64(elapsed[2])/float64(elapsed[0]), "hybrid-vs-literal")
}
