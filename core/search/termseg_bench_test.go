package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

// BenchmarkTermIndexLoad measures what the persisted term index saves a
// new process: a folder of N short notes, indexed and written by one
// store, then searched by a new store over the same rows. It reports the
// rows' bytes per file, the time to write the whole index, the new
// store's first search (loading the index: "load-ms") against building it
// from the files ("build-ms", a store with no persisted index), and the
// files each reads. N is AGENTMEM_BENCH_TERMS_FILES (default 20,000).
func BenchmarkTermIndexLoad(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("AGENTMEM_BENCH_TERMS_FILES")); err == nil && v > 0 {
		n = v
	}
	ctx := b.Context()
	words := strings.Fields("tide ferry harbour bus timetable groceries dentist invoice garden tomatoes basil sofa kitten office " +
		"morning coffee beans bike lock insurance car meeting project deadline sprint review lunch dinner train flight hotel " +
		"passport museum concert ticket birthday present recipe oven bread cheese wine holiday beach mountain hiking boots")
	rng := rand.New(rand.NewPCG(3, 5))
	d := &nnDriver{rows: map[string]driver.File{}}
	for i := range n {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Note %d\n\n", i)
		for range 20 + rng.IntN(40) {
			sb.WriteString(words[rng.IntN(len(words))] + " ")
		}
		p := fmt.Sprintf("u/main/n%06d.md", i)
		d.rows[p] = driver.File{Path: p, Content: sb.String(), Version: ulid.New(time.Now())}
	}
	req := Request{Prefix: "u/main/", Query: "where is my passport for the flight", Mode: BM25, Limit: 5, MaxFiles: 1000, MaxChars: 2000, MaxFileChars: 2000}
	first := func() (time.Duration, int) {
		c := &readCounter{nnDriver: d}
		s := newTestStore(c, nil)
		defer s.Close()
		start := time.Now()
		for {
			res, err := s.Search(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if res.Fallback == "" {
				return time.Since(start), c.read()
			}
			if err := s.terms.wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	var build, load, write time.Duration
	var buildReads, loadReads int
	for b.Loop() {
		for p := range d.rows {
			if isTermRow(p) {
				delete(d.rows, p)
			}
		}
		build, buildReads = first() // Close writes the index
		s := newTestStore(d, nil)
		fi, _, err := s.terms.folder(ctx, "u/main/", req.MaxFiles)
		if err != nil || fi == nil {
			b.Fatalf("folder: %v", err)
		}
		fi.mu.Lock()
		fi.needBase = true
		fi.mu.Unlock()
		start := time.Now()
		if err := s.terms.flush(ctx, fi); err != nil {
			b.Fatal(err)
		}
		write = time.Since(start)
		_ = s.Close()
		load, loadReads = first()
	}
	bytes := 0
	for p, f := range d.rows {
		if isTermRow(p) {
			bytes += len(f.Content)
		}
	}
	b.ReportMetric(float64(bytes)/float64(n), "row-bytes/file")
	b.ReportMetric(float64(write.Milliseconds()), "write-ms")
	b.ReportMetric(float64(build.Milliseconds()), "build-ms")
	b.ReportMetric(float64(load.Milliseconds()), "load-ms")
	b.ReportMetric(float64(buildReads), "build-file-reads")
	b.ReportMetric(float64(loadReads), "load-file-reads")
}
