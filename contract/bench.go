package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// BenchTurn measures what one agent turn costs a backend through the
// notebook, as sub-benchmarks <mode>/<operation> (mode "full" or
// "primitives", as in [Run]):
//
//	append    one write_memory append to MEMORY.md (the tool's read, then
//	          the write with its operation)
//	create    one write_memory call that creates a new file
//	snapshot  one per-request snapshot (MEMORY.md and the file list)
//
// Each reports calls/op (backend calls a [Counter] sees) and rounds/op
// (round trips: calls issued concurrently count once). newDriver returns a
// fresh, empty driver for each sub-benchmark; the benchmark closes it.
func BenchTurn(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	for _, mode := range []string{modeFull, modePrimitives} {
		b.Run(mode, func(b *testing.B) {
			for _, op := range []struct {
				name string
				run  func(b *testing.B, t *turn)
			}{{"append", benchAppend}, {"create", benchCreate}, {"snapshot", benchSnapshot}} {
				b.Run(op.name, func(b *testing.B) {
					raw := newDriver(b)
					d := raw
					if mode == modePrimitives {
						d = Primitives(raw)
					}
					c := NewCounter(shared(d))
					s := store.New(c, nil)
					b.Cleanup(func() { _ = s.Close(); _ = raw.Close() })
					m, err := memory.New(s, &memory.Options{Namespace: "bench"})
					if err != nil {
						b.Fatal(err)
					}
					// Set-up writes go around the counter.
					op.run(b, &turn{mem: m, c: c, setup: store.New(shared(d), nil)})
				})
			}
		})
	}
}

// turn is one benchmark's notebook, counter and uncounted set-up store.
type turn struct {
	mem   *memory.Memory
	c     *Counter
	setup *store.Store
	n     int
}

func (t *turn) call(b *testing.B, tool string, args map[string]any) {
	t.n++
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	res, err := t.mem.Call(b.Context(), memory.Invocation{RunID: "bench", ToolCallID: fmt.Sprint("call-", t.n)}, tool, raw)
	if err != nil {
		b.Fatal(err)
	}
	if te, ok := res.(*memory.ToolError); ok {
		b.Fatalf("%s: %v", tool, te)
	}
}

func (t *turn) report(b *testing.B, ops int) {
	b.ReportMetric(float64(t.c.Total())/float64(ops), "calls/op")
	b.ReportMetric(float64(t.c.Rounds())/float64(ops), "rounds/op")
}

// reset puts content at path, around the counter.
func (t *turn) reset(b *testing.B, path, content string) {
	f, err := t.setup.Read(b.Context(), path, 1)
	expected := ""
	switch {
	case err == nil:
		expected = f.Version
	case !errors.Is(err, store.ErrNotFound):
		b.Fatal(err)
	}
	if _, err := t.setup.Write(b.Context(), store.WriteRequest{Path: path, Content: content, Expected: expected}); err != nil {
		b.Fatal(err)
	}
}

func benchAppend(b *testing.B, t *turn) {
	const path = "bench/main/MEMORY.md"
	t.reset(b, path, "- a fact\n")
	t.c.Reset()
	ops := 0
	for b.Loop() {
		if ops++; ops%500 == 0 {
			b.StopTimer()
			t.reset(b, path, "- a fact\n") // keep the file short
			b.StartTimer()
		}
		t.call(b, "write_memory", map[string]any{"content": fmt.Sprint("- fact ", ops)})
	}
	t.report(b, ops)
}

func benchCreate(b *testing.B, t *turn) {
	t.c.Reset()
	ops := 0
	for b.Loop() {
		ops++
		t.call(b, "write_memory", map[string]any{"file": fmt.Sprintf("topic-%d", ops), "content": "- a topic"})
	}
	t.report(b, ops)
}

func benchSnapshot(b *testing.B, t *turn) {
	t.reset(b, "bench/main/MEMORY.md", strings.Repeat("- a durable fact about the user\n", 40))
	for i := range 20 {
		t.reset(b, fmt.Sprintf("bench/main/topic-%02d.md", i), "- a topic\n")
	}
	t.c.Reset()
	ops := 0
	for b.Loop() {
		ops++
		block, err := t.mem.Snapshot(b.Context(), "")
		if err != nil || block == "" {
			b.Fatalf("snapshot = %q, %v", block, err)
		}
	}
	t.report(b, ops)
}

// BenchContention measures appends under contention on one shared file:
// for each writer count w, sub-benchmark "writers=<w>" runs total
// memory.Append calls with unique operation ids (and no deadline), spread
// evenly over w concurrent writers, onto a file that does not exist yet,
// then checks that every line landed exactly once. It reports:
//
//	appends/s    throughput of the whole sweep
//	failures     appends that returned an error, or lines lost or doubled
//	vs-1-writer  throughput relative to the first writer count's (1
//	             writer, when writers starts with 1)
//	ns/append    wall time per append
//
// Each call runs one sweep whatever b.N is (a sweep is the unit measured;
// ns/op is not meaningful). newDriver returns a fresh, empty driver for
// each sub-benchmark; the benchmark closes it.
func BenchContention(b *testing.B, newDriver func(b *testing.B) driver.Driver, total int, writers ...int) {
	var base float64
	for _, w := range writers {
		b.Run(fmt.Sprintf("writers=%d", w), func(b *testing.B) {
			raw := newDriver(b)
			s := store.New(shared(raw), nil)
			b.Cleanup(func() { _ = s.Close(); _ = raw.Close() })
			path := fmt.Sprintf("bench/main/shared-%d.md", b.N)
			var failures atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i := range w {
				wg.Go(func() {
					for j := i; j < total; j += w {
						line := fmt.Sprintf("- entry %d", j)
						_, err := memory.Append(b.Context(), s, path, line, &memory.AppendOptions{OperationID: fmt.Sprintf("%s/%d", path, j), MaxMemorySize: 1 << 20})
						if err != nil {
							failures.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			f, err := s.Read(b.Context(), path, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			seen := map[string]int{}
			for _, l := range strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n") {
				seen[l]++
			}
			for j := range total {
				if n := seen[fmt.Sprintf("- entry %d", j)]; n != 1 {
					failures.Add(1)
				}
			}
			rate := float64(total) / elapsed.Seconds()
			if w == writers[0] {
				base = rate
			}
			b.ReportMetric(rate, "appends/s")
			b.ReportMetric(float64(failures.Load()), "failures")
			b.ReportMetric(rate/base, "vs-1-writer")
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(total), "ns/append")
		})
	}
}

// BenchHistory measures what recording history costs an idempotent write
// (a compare-and-swap write with an operation, as write_memory makes), as
// one sub-benchmark per mode ("full" or "primitives"). Each iteration
// makes one write through a store with history off and one through a
// store with history on, alternately, so that both see the same machine;
// it reports calls-off/op and calls-on/op (backend calls a [Counter]
// sees per write), ns-off/op and ns-on/op, and vs-off, their ratio. On a
// backend with an atomic path the calls are the same with history on (the
// entry rides in the change's request); over the primitives the entry
// costs a put and a completion. newDriver returns a fresh, empty driver
// for each store; the benchmark closes it.
func BenchHistory(b *testing.B, newDriver func(b *testing.B) driver.Driver) {
	for _, mode := range []string{modeFull, modePrimitives} {
		b.Run(mode, func(b *testing.B) {
			type side struct {
				c       *Counter
				s       *store.Store
				version string
				elapsed time.Duration
			}
			open := func(on bool) *side {
				raw := newDriver(b)
				d := raw
				if mode == modePrimitives {
					d = Primitives(raw)
				}
				opts := &store.Options{}
				if on {
					opts.History = &store.HistoryOptions{}
				}
				sd := &side{c: NewCounter(d)}
				sd.s = store.New(sd.c, opts)
				b.Cleanup(func() { _ = sd.s.Close(); _ = raw.Close() })
				m, err := sd.s.Write(b.Context(), store.WriteRequest{Path: "bench/main/history.md", Content: "start\n"})
				if err != nil {
					b.Fatal(err)
				}
				sd.version = m.Version
				sd.c.Reset()
				return sd
			}
			off, on := open(false), open(true)
			b.ResetTimer()
			for i := range b.N {
				for _, sd := range []*side{off, on} {
					began := time.Now()
					m, err := sd.s.Write(b.Context(), store.WriteRequest{Path: "bench/main/history.md", Content: fmt.Sprintf("line %d\n", i), Expected: sd.version,
						Operation: &store.Operation{ID: fmt.Sprintf("bench/%p/%d", sd, i), Fingerprint: "fp"}, Metadata: map[string]string{"updated_by": "bench"}})
					sd.elapsed += time.Since(began)
					if err != nil {
						b.Fatal(err)
					}
					sd.version = m.Version
				}
			}
			b.StopTimer()
			reportOffOn(b, off.c, on.c, off.elapsed, on.elapsed)
		})
	}
}

// reportOffOn reports a benchmark that ran each iteration with a feature
// off and on: calls-off/op and calls-on/op (the backend calls each
// [Counter] saw), ns-off/op, ns-on/op and vs-off, their ratio.
func reportOffOn(b *testing.B, off, on *Counter, offElapsed, onElapsed time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(off.Total())/n, "calls-off/op")
	b.ReportMetric(float64(on.Total())/n, "calls-on/op")
	b.ReportMetric(float64(offElapsed.Nanoseconds())/n, "ns-off/op")
	b.ReportMetric(float64(onElapsed.Nanoseconds())/n, "ns-on/op")
	b.ReportMetric(float64(onElapsed)/float64(offElapsed), "vs-off")
}
