package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// BenchmarkIdempotentWrite measures the notebook tool's write: read the
// file, then write it with an operation over the version read. Only the
// write is counted and timed. Reported:
//
//	roundtrips/op  statements + prepares per write, from a pgx tracer
//	               (full: one call of the mutation function)
//	write-µs       mean latency of the write
//	raw-µs         mean latency of a raw conditional write on the same pool:
//	               a single-row UPDATE … WHERE path = $3 AND version = $4
//	x-raw-update   write-µs / raw-µs, measured interleaved in the same run
func BenchmarkIdempotentWrite(b *testing.B) {
	url := testURL(b)
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			tr := &counter{}
			pool := newPool(b, url, tr, 1)
			table := uniqueTable(b, url)
			d, err := New(ctx, pool, &Options{Table: table})
			if err != nil {
				b.Fatal(err)
			}
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			s := store.New(dd, nil)
			raw := quote(table + "_raw")
			if _, err := pool.Exec(ctx, `CREATE TABLE `+raw+` (path text COLLATE "C" PRIMARY KEY, content text NOT NULL, version text NOT NULL);
				INSERT INTO `+raw+` VALUES ('u/main/MEMORY.md', '', 'v0')`); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { uniqueTableDrop(b, url, table+"_raw") })
			const path = "u/main/MEMORY.md"
			if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "- a fact\n"}); err != nil {
				b.Fatal(err)
			}
			var write, rawUpdate time.Duration
			i := 0
			tr.pause(true)
			tr.take()
			for b.Loop() {
				i++
				f, err := s.Read(ctx, path, 65536)
				if err != nil {
					b.Fatal(err)
				}
				content := fmt.Sprintf("- fact %d\n", i)
				tr.pause(false)
				t0 := time.Now()
				if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: content, Expected: f.Version,
					Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				tr.pause(true)
				if tag, err := pool.Exec(ctx, `UPDATE `+raw+` SET content = $1, version = $2 WHERE path = $3 AND version = $4`,
					content, fmt.Sprint("v", i), path, fmt.Sprint("v", i-1)); err != nil {
					b.Fatal(err)
				} else if tag.RowsAffected() != 1 {
					b.Fatalf("raw conditional write changed %d rows", tag.RowsAffected())
				}
				write += t1.Sub(t0)
				rawUpdate += time.Since(t1)
			}
			q, p, _ := tr.take()
			n := float64(i)
			b.ReportMetric(float64(q+p)/n, "roundtrips/op")
			b.ReportMetric(float64(write.Microseconds())/n, "write-µs")
			b.ReportMetric(float64(rawUpdate.Microseconds())/n, "raw-µs")
			b.ReportMetric(float64(write)/float64(rawUpdate), "x-raw-update")
		})
	}
}

// BenchmarkSearch searches a scope of 200 files among 2,000: one ReadScope
// statement.
func BenchmarkSearch(b *testing.B) {
	url := testURL(b)
	ctx := b.Context()
	tr := &counter{}
	pool := newPool(b, url, tr, 1)
	table := uniqueTable(b, url)
	d, err := New(ctx, pool, &Options{Table: table})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO `+quote(table)+` (path, content, version)
		SELECT 'u' || (i % 10) || '/main/f' || i || '.md', 'note ' || i || ' about flights and trains', 'v' || i
		FROM generate_series(1, 2000) AS i`); err != nil {
		b.Fatal(err)
	}
	s := store.New(d, nil)
	tr.take()
	for b.Loop() {
		if _, err := s.Search(ctx, search.Request{Prefix: "u3/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
			b.Fatal(err)
		}
	}
	q, p, _ := tr.take()
	b.ReportMetric(float64(q+p)/float64(b.N), "roundtrips/op")
}

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn): backend calls and round trips of a write_memory
// append, a create and a snapshot.
func BenchmarkTurn(b *testing.B) {
	url := testURL(b)
	pool := newPool(b, url, nil, 4)
	contract.BenchTurn(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), pool, &Options{Table: uniqueTable(b, url)})
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkContention: 1/4/16/64 writers × 640 appends onto one file (see
// contract.BenchContention). Issue 18: 0 failures, ≥ 50% of one writer's
// throughput at 64.
func BenchmarkContention(b *testing.B) {
	url := testURL(b)
	pool := newPool(b, url, nil, 8)
	contract.BenchContention(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), pool, &Options{Table: uniqueTable(b, url)})
		if err != nil {
			b.Fatal(err)
		}
		return d
	}, 640, 1, 4, 16, 64)
}

// BenchmarkHistory is the cost of history (see contract.BenchHistory):
// backend calls and latency of an idempotent write with history off and
// on, in both modes. Full: the entry rides in the mutation function's
// call (1 call either way); primitives: the pending entry and its
// completion are two statements more.
func BenchmarkHistory(b *testing.B) {
	url := testURL(b)
	pool := newPool(b, url, nil, 4)
	contract.BenchHistory(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), pool, &Options{Table: uniqueTable(b, url)})
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkTermIndexedWrite is a write into a folder of 1,000 notes whose
// term index is live (the folder searched once, so the change feed keeps
// it) and into one never searched, alternately (see
// contract.BenchTermIndexedWrite): vs-off is the ratio (issue 36: ≤ 1.1).
func BenchmarkTermIndexedWrite(b *testing.B) {
	url := testURL(b)
	pool := newPool(b, url, nil, 4)
	contract.BenchTermIndexedWrite(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), pool, &Options{Table: uniqueTable(b, url)})
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkLifetime is what a file's expiry and pin cost the reads that
// check them (see contract.BenchLifetime): a read, a listing and a
// snapshot of a folder of 200 files without lifetimes and with one on
// every file, their calls and latency ratio (vs-off).
func BenchmarkLifetime(b *testing.B) {
	url := testURL(b)
	pool := newPool(b, url, nil, 4)
	contract.BenchLifetime(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), pool, &Options{Table: uniqueTable(b, url)})
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}
