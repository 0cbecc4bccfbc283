package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

var pruneBench struct {
	once                         sync.Once
	n, writes                    int
	prune, worst, p99, idleWorst time.Duration
	hold                         time.Duration
}

// BenchmarkPruneExpired prunes 100,000 expired receipts (5,000 with
// -short) once while a writer keeps writing one file through the store
// (the figures are measured once and reported on each invocation).
// Reported:
//
//	prune-ms        time of the whole prune
//	writer-max-ms   the writer's worst write latency during the prune
//	                (target ≤ 10 ms: one transaction per batch)
//	writer-p99-ms   its 99th percentile
//	writes          writes that completed during the prune
//	hold-max-ms     the longest a prune transaction held the writer slot
//	                (what the prune itself can make a writer wait)
//	idle-max-ms     the writer's worst latency in the 300 ms before the
//	                prune (the machine's own noise, for comparison)
func BenchmarkPruneExpired(b *testing.B) {
	users := 100_000
	if testing.Short() {
		users = 5_000
	}
	pruneBench.once.Do(func() {
		ctx := b.Context()
		d := openTest(b, filepath.Join(b.TempDir(), "prune.db"), nil)
		t0 := time.Now()
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := range users {
			if _, err := tx.ExecContext(ctx, `INSERT INTO "agent_memory_receipts" (`+receiptCols+`) VALUES (?, 'fp', 'write', ?, '', 'v', 0, 1, ?, ?)`,
				fmt.Sprint("op-", i), fmt.Sprintf("u%06d/MEMORY.md", i), t0.UnixMilli(), t0.Add(time.Hour).UnixMilli()); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		d.pruneHold = func(h time.Duration) { pruneBench.hold = max(pruneBench.hold, h) }
		s := store.New(d, nil)
		m, err := s.Write(ctx, store.WriteRequest{Path: "writer/MEMORY.md", Content: "0"})
		if err != nil {
			b.Fatal(err)
		}
		var stop, pruning atomic.Bool
		var lat, idle []time.Duration
		done := make(chan error, 1)
		go func() {
			version := m.Version
			for i := 1; !stop.Load(); i++ {
				t := time.Now()
				m, err := s.Write(ctx, store.WriteRequest{Path: "writer/MEMORY.md", Content: fmt.Sprint(i), Expected: version,
					Operation: &store.Operation{ID: fmt.Sprint("w-", i), Fingerprint: "fp"}})
				if err != nil {
					done <- err
					return
				}
				if pruning.Load() {
					lat = append(lat, time.Since(t))
				} else {
					idle = append(idle, time.Since(t))
				}
				version = m.Version
			}
			done <- nil
		}()
		time.Sleep(300 * time.Millisecond)
		pruning.Store(true)
		t := time.Now()
		n, err := d.PruneExpired(ctx, t0.Add(2*time.Hour))
		pruneBench.prune = time.Since(t)
		stop.Store(true)
		if werr := <-done; err != nil || werr != nil {
			b.Fatalf("prune: %v; writer: %v", err, werr)
		}
		slices.Sort(lat)
		pruneBench.n, pruneBench.writes = n, len(lat)
		if len(lat) > 0 {
			pruneBench.worst, pruneBench.p99 = lat[len(lat)-1], lat[len(lat)*99/100]
		}
		if len(idle) > 0 {
			pruneBench.idleWorst = slices.Max(idle)
		}
	})
	b.ResetTimer() // ns/op means nothing here; the figures are the metrics
	// The writer's own receipts expire an hour after they are written: not yet.
	if pruneBench.n != users {
		b.Fatalf("pruned %d receipts, want %d", pruneBench.n, users)
	}
	b.ReportMetric(float64(pruneBench.n), "receipts")
	b.ReportMetric(float64(pruneBench.prune.Microseconds())/1000, "prune-ms")
	b.ReportMetric(float64(pruneBench.worst.Microseconds())/1000, "writer-max-ms")
	b.ReportMetric(float64(pruneBench.p99.Microseconds())/1000, "writer-p99-ms")
	b.ReportMetric(float64(pruneBench.writes), "writes")
	b.ReportMetric(float64(pruneBench.hold.Microseconds())/1000, "hold-max-ms")
	b.ReportMetric(float64(pruneBench.idleWorst.Microseconds())/1000, "idle-max-ms")
}
