package sqlite

import (
	"fmt"
	"path/filepath"
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
//	tx/op          transactions committed per write (SQLite commit hook)
//	stmt/op        SQL statements per write besides BEGIN and COMMIT
//	               (sqlite3_trace_v2); full: INSERT receipt + UPDATE file
//	write-µs       mean latency of the write (WAL, synchronous=FULL)
//	raw-µs         mean latency of a raw conditional write on the same file: a
//	               single-row UPDATE … WHERE path = ? AND version = ?
//	x-raw-update   write-µs / raw-µs, measured interleaved in the same run
func BenchmarkIdempotentWrite(b *testing.B) {
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			c := &stmtCounter{}
			d, err := open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil, c.install)
			if err != nil {
				b.Fatal(err)
			}
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			s := store.New(dd, nil)
			defer s.Close()
			const path = "u/main/MEMORY.md"
			if _, err := d.DB().ExecContext(ctx, `CREATE TABLE raw (path TEXT PRIMARY KEY, content TEXT NOT NULL, version TEXT NOT NULL);
				INSERT INTO raw VALUES ('u/main/MEMORY.md', '', 'v0')`); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "- a fact\n"}); err != nil {
				b.Fatal(err)
			}
			var write, rawUpdate time.Duration
			i := 0
			c.pause(true)
			c.take()
			for b.Loop() {
				i++
				f, err := s.Read(ctx, path, 65536)
				if err != nil {
					b.Fatal(err)
				}
				content := fmt.Sprintf("- fact %d\n", i)
				c.pause(false)
				t0 := time.Now()
				if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: content, Expected: f.Version,
					Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				c.pause(true)
				if res, err := d.DB().ExecContext(ctx, `UPDATE raw SET content = ?, version = ? WHERE path = ? AND version = ?`,
					content, fmt.Sprint("v", i), path, fmt.Sprint("v", i-1)); err != nil {
					b.Fatal(err)
				} else if n, _ := res.RowsAffected(); n != 1 {
					b.Fatalf("raw conditional write changed %d rows", n)
				}
				write += t1.Sub(t0)
				rawUpdate += time.Since(t1)
			}
			stmts, commits, _ := c.take()
			n := float64(i)
			b.ReportMetric(float64(commits)/n, "tx/op")
			b.ReportMetric(float64(stmts)/n, "stmt/op")
			b.ReportMetric(float64(write.Microseconds())/n, "write-µs")
			b.ReportMetric(float64(rawUpdate.Microseconds())/n, "raw-µs")
			b.ReportMetric(float64(write)/float64(rawUpdate), "x-raw-update")
		})
	}
}

// BenchmarkSearch searches a scope of 200 files among 2,000: one ReadScope
// statement.
func BenchmarkSearch(b *testing.B) {
	ctx := b.Context()
	c := &stmtCounter{}
	d, err := open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil, c.install)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := d.DB().ExecContext(ctx, `WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 2000)
		INSERT INTO agent_memory (path, content, version)
		SELECT 'u' || (n % 10) || '/main/f' || n || '.md', 'note ' || n || ' about flights and trains', 'v' || n FROM i`); err != nil {
		b.Fatal(err)
	}
	s := store.New(d, nil)
	defer s.Close()
	c.take()
	for b.Loop() {
		if _, err := s.Search(ctx, search.Request{Prefix: "u3/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
			b.Fatal(err)
		}
	}
	stmts, _, _ := c.take()
	b.ReportMetric(float64(stmts)/float64(b.N), "stmt/op")
}

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn): backend calls and round trips of a write_memory
// append, a create and a snapshot.
func BenchmarkTurn(b *testing.B) {
	contract.BenchTurn(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
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
	contract.BenchContention(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}, 640, 1, 4, 16, 64)
}

// BenchmarkHistory is an idempotent write with history off and on, both
// modes (see contract.BenchHistory): calls/op, and the latency of history
// on as a ratio to off (vs-off). Full: the entry is one more statement in
// the write's transaction, so the calls stay the same.
func BenchmarkHistory(b *testing.B) {
	contract.BenchHistory(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkIndexedWrite is an idempotent write with the search index off
// and on, alternately (see contract.BenchIndexedWrite): the latency of the
// write with the index on as a ratio to off (vs-off), the embeddings per
// changed write and per unchanged rewrite, index bytes per chunk.
func BenchmarkIndexedWrite(b *testing.B) {
	contract.BenchIndexedWrite(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
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
	contract.BenchTermIndexedWrite(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkHybridSearch is a search over 1,000 files of one scope, index
// warm, literal, BM25 and hybrid alternately (see
// contract.BenchHybridSearch): hybrid-vs-literal and bm25-vs-literal.
func BenchmarkHybridSearch(b *testing.B) {
	contract.BenchHybridSearch(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
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
	contract.BenchLifetime(b, func(b *testing.B) driver.Driver {
		d, err := New(b.Context(), filepath.Join(b.TempDir(), "bench.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}
