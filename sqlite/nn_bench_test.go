package sqlite

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/vec1"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// The nearest-neighbour benchmarks (issue 28, build item 4): one scope of
// 10,000 chunks of 100-d vectors (1,000 files of 10 chunks, the corpus of
// core/store/nn_bench_test.go), searched the way the store does today
// (its index rows read with one ReadScope, decoded and scored in Go) and
// with SQLite's vec1 extension, which the module we depend on ships
// (github.com/ncruces/go-sqlite3/ext/vec1, registered per connection).
// Run with
//
//	AGENTMEM_BENCH_NN=1 go test -run '^$' -bench NN .

// The shared corpus (module contract's NN names).
const (
	nnFiles    = contract.NNFiles
	nnSections = contract.NNSections
	nnQuery    = contract.NNQuery
	nnK        = contract.NNK
)

// nnShapes are the corpus shapes, in words per chunk (see core's
// nn_bench_test.go): 40 keeps repeated searches warm, 110 does not.
var nnShapes = []int{40, 110}

// nnBlob is v in vec1's format: packed float32 in machine byte order.
func nnBlob(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.NativeEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// BenchmarkNN compares, over one scope of 10,000 chunks:
//
//	today/read-index  the vector stage's read: the scope's 1,000 index rows
//	                  with one ReadScope (decoding is cached by the store
//	                  and scoring is in Go: core's BenchmarkNNVectorStage)
//	today/search-*    the whole search, BM25 alone and hybrid
//	vec1-write        keeping a vec1 table: one file's 10 chunks inserted
//	                  in one transaction (one INSERT per chunk)
//	vec1-flat         top-10 from a vec1 virtual table with a flat index,
//	                  the scope as a metadata column
//	vec1-none         the same with no index (an exhaustive scan)
//	sql-scan          a plain table keyed by (scope, path, hash), top-10
//	                  by ORDER BY vec1_cos_distance(v, ?) LIMIT 10
//	sql-hashes        the scope's (path, hash) list from that table
//	sql-stamps        the same from one row per file (its hashes joined)
//	e2e-*             a hybrid search on the native path: the BM25 search,
//	                  the native top-10 and the scope's stamps, in turn
//	*+others          the same after 40,000 chunks of 4 other tenants
//
// stmt/op counts SQL statements (the "round trips" of an in-process
// database); recall is the top-10's overlap with the exact one; cpu-ns/op
// is the process's CPU time per op (steadier than ns/op on a shared
// machine). Each op runs once untimed first.
func BenchmarkNN(b *testing.B) {
	if os.Getenv("AGENTMEM_BENCH_NN") == "" {
		b.Skip("set AGENTMEM_BENCH_NN=1 to run the 10,000-chunk nearest-neighbour comparison (slow; docs/search.md)")
	}
	for _, words := range nnShapes {
		b.Run(fmt.Sprintf("words=%d", words), func(b *testing.B) { benchNN(b, words) })
	}
}

func benchNN(b *testing.B, words int) {
	ctx := b.Context()
	c := &stmtCounter{}
	d, err := open(ctx, filepath.Join(b.TempDir(), "nn.db"), nil, func(conn *sqlite3.Conn) error {
		if err := vec1.Register(conn); err != nil {
			return err
		}
		return c.install(conn)
	})
	if err != nil {
		b.Fatal(err)
	}
	c.pause(true)
	s := store.New(d, &store.Options{Embedder: contract.NNEmbedder{}})
	defer s.Close()
	for i := range nnFiles {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%04d.md", i), Content: contract.NNFile(i, words), Version: fmt.Sprint("v", i)}); err != nil {
			b.Fatal(err)
		}
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
	qBlob := nnBlob(q)
	exact := contract.NNExact(chunks, q, nnK)
	db := d.DB()

	measure := func(name string, fn func(b *testing.B) map[string]bool) {
		b.Run(name, func(b *testing.B) {
			fn(b) // warm the store's caches, untimed
			b.ReportAllocs()
			c.take()
			c.pause(false)
			cpu := nnCPU()
			var got map[string]bool
			for b.Loop() {
				got = fn(b)
			}
			b.ReportMetric(float64((nnCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			c.pause(true)
			stmts, _, _ := c.take()
			b.ReportMetric(float64(stmts)/float64(b.N), "stmt/op")
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
	for _, m := range []search.Mode{search.BM25, search.Hybrid} {
		measure("today/search-"+string(m), func(b *testing.B) map[string]bool {
			if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: nnQuery, Mode: m, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	}

	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE nn_vec USING vec1(v, scope, path, hash);
		INSERT INTO nn_vec(cmd, arg) VALUES('rebuild', '{index:"flat", distance:"cos"}');
		CREATE TABLE nn_rows (scope TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, v BLOB NOT NULL, PRIMARY KEY (scope, path, hash)) WITHOUT ROWID;
		CREATE TABLE nn_files (scope TEXT NOT NULL, path TEXT NOT NULL, hashes TEXT NOT NULL, PRIMARY KEY (scope, path)) WITHOUT ROWID;`); err != nil {
		b.Fatal(err)
	}
	// insertFile inserts files' chunks in one transaction (one file's, as
	// an indexer would after embedding them; or a bulk load).
	insertFile := func(b *testing.B, scope string, table string, cs ...[]contract.NNChunk) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback()
		q := `INSERT INTO nn_vec(v, scope, path, hash) VALUES (?, ?, ?, ?)`
		if table == "nn_rows" {
			q = `INSERT INTO nn_rows(v, scope, path, hash) VALUES (?, ?, ?, ?)`
		}
		for _, f := range cs {
			for _, ch := range f {
				if _, err := tx.ExecContext(ctx, q, nnBlob(ch.Vec), scope, ch.Path, ch.Hash); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	files := slices.Collect(func(yield func([]contract.NNChunk) bool) {
		for i := 0; i < len(chunks); i += nnSections {
			if !yield(chunks[i : i+nnSections]) {
				return
			}
		}
	})
	i := 0
	measure("vec1-write", func(b *testing.B) map[string]bool {
		i++
		insertFile(b, fmt.Sprintf("w%d/main/", i), "nn_vec", files[i%len(files)])
		return nil
	})
	if _, err := db.ExecContext(ctx, `DELETE FROM nn_vec`); err != nil {
		b.Fatal(err)
	}
	insertFile(b, "u/main/", "nn_vec", files...)
	insertFile(b, "u/main/", "nn_rows", files...)
	insertStamps := func(scope string) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback()
		for _, f := range files {
			hs := make([]string, len(f))
			for i, ch := range f {
				hs[i] = ch.Hash
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO nn_files(scope, path, hashes) VALUES (?, ?, ?)`, scope, f[0].Path, strings.Join(hs, " ")); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	insertStamps("u/main/")
	knn := func(query string) func(b *testing.B) map[string]bool {
		return func(b *testing.B) map[string]bool {
			rs, err := db.QueryContext(ctx, query, qBlob, nnK, "u/main/")
			if err != nil {
				b.Fatal(err)
			}
			defer rs.Close()
			got := map[string]bool{}
			for rs.Next() {
				var p, h string
				var dist float64
				if err := rs.Scan(&p, &h, &dist); err != nil {
					b.Fatal(err)
				}
				got[p+"#"+h] = true
			}
			if err := rs.Err(); err != nil {
				b.Fatal(err)
			}
			if len(got) != nnK {
				b.Fatalf("%d results, want %d", len(got), nnK)
			}
			return got
		}
	}
	vecQuery := `SELECT path, hash, distance FROM nn_vec(?1, ?2) WHERE scope = ?3`
	scanQuery := `SELECT path, hash, vec1_cos_distance(v, ?1) AS dist FROM nn_rows WHERE scope = ?3 ORDER BY dist LIMIT ?2`
	// hashes reads which chunks the native rows hold for the scope: what
	// a native path still needs to find the files the index lacks (today
	// the index rows the vector stage reads tell it).
	hashes := func(b *testing.B) map[string]bool {
		rs, err := db.QueryContext(ctx, `SELECT path, hash FROM nn_rows WHERE scope = ?`, "u/main/")
		if err != nil {
			b.Fatal(err)
		}
		defer rs.Close()
		n := 0
		for rs.Next() {
			var p, h string
			if err := rs.Scan(&p, &h); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != nnFiles*nnSections {
			b.Fatalf("%d chunk rows, want %d", n, nnFiles*nnSections)
		}
		return nil
	}
	// stamps reads one row per file instead: the file's chunk hashes in
	// one string, the cheapest way for a native path to learn the same.
	stamps := func(b *testing.B) map[string]bool {
		rs, err := db.QueryContext(ctx, `SELECT path, hashes FROM nn_files WHERE scope = ?`, "u/main/")
		if err != nil {
			b.Fatal(err)
		}
		defer rs.Close()
		n := 0
		for rs.Next() {
			var p, h string
			if err := rs.Scan(&p, &h); err != nil {
				b.Fatal(err)
			}
			n += strings.Count(h, " ") + 1
		}
		if n != nnFiles*nnSections {
			b.Fatalf("%d chunk hashes, want %d", n, nnFiles*nnSections)
		}
		return nil
	}
	// e2e is a hybrid search with the native path, sequentially: the BM25
	// search (which reads and scores the files, as hybrid does), the
	// native top-10 and the scope's chunk list (the fusion is negligible).
	e2e := func(query string) func(b *testing.B) map[string]bool {
		top := knn(query)
		return func(b *testing.B) map[string]bool {
			if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: nnQuery, Mode: search.BM25, Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
				b.Fatal(err)
			}
			got := top(b)
			stamps(b)
			return got
		}
	}
	run := func(suffix string) {
		if _, err := db.ExecContext(ctx, `INSERT INTO nn_vec(cmd, arg) VALUES('rebuild', '{index:"flat", distance:"cos"}')`); err != nil {
			b.Fatal(err)
		}
		measure("vec1-flat"+suffix, knn(vecQuery))
		measure("e2e-vec1-flat"+suffix, e2e(vecQuery))
		if _, err := db.ExecContext(ctx, `INSERT INTO nn_vec(cmd, arg) VALUES('rebuild', '{index:"none", distance:"cos"}')`); err != nil {
			b.Fatal(err)
		}
		measure("vec1-none"+suffix, knn(vecQuery))
		measure("sql-scan"+suffix, knn(scanQuery))
		measure("sql-hashes"+suffix, hashes)
		measure("sql-stamps"+suffix, stamps)
		measure("e2e-sql-scan"+suffix, e2e(scanQuery))
	}
	run("")
	for t := range 4 {
		insertFile(b, fmt.Sprintf("o%d/main/", t), "nn_vec", files...)
		insertFile(b, fmt.Sprintf("o%d/main/", t), "nn_rows", files...)
		insertStamps(fmt.Sprintf("o%d/main/", t))
	}
	run("+others")
}
