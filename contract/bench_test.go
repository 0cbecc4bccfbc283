package contract_test

import (
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// benchModes runs fn on memstore in both modes, reporting driver calls per
// operation (req/op) from a Counter.
func benchModes(b *testing.B, fn func(b *testing.B, s *store.Store, c *contract.Counter)) {
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			var d driver.Driver = newMemDriver(b)
			if mode == "primitives" {
				d = contract.Primitives(d)
			}
			c := contract.NewCounter(d)
			s := store.New(c, nil)
			fn(b, s, c)
		})
	}
}

func report(b *testing.B, c *contract.Counter) {
	b.ReportMetric(float64(c.Total())/float64(b.N), "req/op")
}

func BenchmarkRead(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, c *contract.Counter) {
		ctx := b.Context()
		if _, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- a fact\n"}); err != nil {
			b.Fatal(err)
		}
		c.Reset()
		for b.Loop() {
			if _, err := s.Read(ctx, "u/main/MEMORY.md", 65536); err != nil {
				b.Fatal(err)
			}
		}
		report(b, c)
	})
}

// BenchmarkIdempotentWrite measures one tool-style write: a write with an
// operation over the version just read (the read is not counted).
func BenchmarkIdempotentWrite(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, c *contract.Counter) {
		ctx := b.Context()
		m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- a fact\n"})
		if err != nil {
			b.Fatal(err)
		}
		c.Reset()
		i := 0
		for b.Loop() {
			i++
			m, err = s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: fmt.Sprint("- fact ", i), Expected: m.Version,
				Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}})
			if err != nil {
				b.Fatal(err)
			}
		}
		report(b, c)
	})
}

// BenchmarkSearch searches a scope of 200 files.
func BenchmarkSearch(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, c *contract.Counter) {
		ctx := b.Context()
		for i := 0; i < 200; i++ {
			if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/f%03d.md", i), Content: fmt.Sprintf("note %d about flights and trains", i)}); err != nil {
				b.Fatal(err)
			}
		}
		c.Reset()
		for b.Loop() {
			if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, c)
	})
}

// BenchmarkCreate measures a tool-style create of a new file at depth 3
// with an operation. Besides the mutation it reads the two ancestors (one
// batched read, or one read each over the primitives) and lists one entry
// below the path: the file/folder check.
func BenchmarkCreate(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, c *contract.Counter) {
		ctx := b.Context()
		c.Reset()
		i := 0
		for b.Loop() {
			i++
			if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/f%d.md", i), Content: "- a fact\n",
				Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, c)
	})
}

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn) on memstore and filestore.
func BenchmarkTurn(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		contract.BenchTurn(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
	})
	b.Run("filestore", func(b *testing.B) {
		contract.BenchTurn(b, func(b *testing.B) driver.Driver {
			d, err := filestore.New(b.Context(), b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			return d
		})
	})
}

// BenchmarkContention: 1/4/16/64 writers × 640 appends onto one file, on
// memstore and filestore (issue 18: 0 failures, ≥ 50% of one writer's
// throughput at 64).
func BenchmarkContention(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		contract.BenchContention(b, func(b *testing.B) driver.Driver { return newMemDriver(b) }, 640, 1, 4, 16, 64)
	})
	b.Run("filestore", func(b *testing.B) {
		contract.BenchContention(b, func(b *testing.B) driver.Driver {
			d, err := filestore.New(b.Context(), b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			return d
		}, 640, 1, 4, 16, 64)
	})
}
