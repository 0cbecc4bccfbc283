package memstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// newDriver returns a new driver, failing tb if New fails.
func newDriver(tb testing.TB) *Driver {
	tb.Helper()
	d, err := New(tb.Context(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TestNewRefusesNilContext: a nil ctx is an error wrapping
// store.ErrNilArgument, never a panic; nil opts mean defaults.
func TestNewRefusesNilContext(t *testing.T) {
	var ctx context.Context
	d, err := New(ctx, nil)
	if !errors.Is(err, store.ErrNilArgument) || d != nil {
		t.Fatalf("New(nil, nil) = %v, %v; want an error wrapping store.ErrNilArgument", d, err)
	}
	if d, err := New(t.Context(), &Options{}); err != nil || d == nil {
		t.Fatalf("New(ctx, &Options{}) = %v, %v", d, err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := New(done, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("New(done ctx) err = %v, want context.Canceled", err)
	}
}

func TestIndexMatchesSortedSet(t *testing.T) {
	x := newIndex()
	set := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		k := fmt.Sprintf("u%03d/f%d.md", r.IntN(300), r.IntN(10))
		if r.IntN(3) == 0 {
			if x.remove(k) != set[k] {
				t.Fatalf("step %d: remove(%q) disagrees with the set", i, k)
			}
			delete(set, k)
		} else {
			if x.insert(k) == set[k] {
				t.Fatalf("step %d: insert(%q) disagrees with the set", i, k)
			}
			set[k] = true
		}
	}
	want := make([]string, 0, len(set))
	for k := range set {
		want = append(want, k)
	}
	slices.Sort(want)
	if got := x.keys(); !slices.Equal(got, want) || x.len != len(want) {
		t.Fatalf("index holds %d keys (len %d), want %d", len(got), x.len, len(want))
	}
	for _, probe := range []string{"", "u100/", "u100/f5.md", "u299/f9.md~", "zzz"} {
		i, _ := slices.BinarySearch(want, probe)
		n := x.seek(probe)
		switch {
		case i == len(want) && n != nil:
			t.Fatalf("seek(%q) = %q, want none", probe, n.key)
		case i < len(want) && (n == nil || n.key != want[i]):
			t.Fatalf("seek(%q) = %v, want %q", probe, n, want[i])
		}
	}
}

// TestPruneInBatches checks that a prune removes every expired row in
// batches of pruneBatch and releases the mutex between batches, and that
// rows not yet expired (or expired and then renewed) stay.
func TestPruneInBatches(t *testing.T) {
	ctx := t.Context()
	d := newDriver(t)
	d.pruneBatch = 3
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		r := driver.Receipt{ID: fmt.Sprint("old-", i), Version: "v", ExpiresAt: now.Add(-time.Minute)}
		if err := d.ReserveReceipt(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "fresh", Version: "v", ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// Reserved with an early expiry, completed with a later one: kept.
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "renewed", Version: "v", ExpiresAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CompleteReceipt(ctx, driver.Receipt{ID: "renewed", Version: "v", Completed: true, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "t/gone.md", Version: "t1", Tombstone: true, ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	// A tombstone replaced by a file before it expired: the file stays.
	if err := d.CreateFile(ctx, driver.File{Path: "t/back.md", Version: "t2", Tombstone: true, ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceFile(ctx, driver.File{Path: "t/back.md", Version: "f1", Content: "x"}, "t2"); err != nil {
		t.Fatal(err)
	}
	batches := 0
	d.pruneHook = func() {
		batches++
		if !d.mu.TryLock() {
			t.Error("the mutex is held between prune batches")
			return
		}
		d.mu.Unlock()
		// Other calls proceed between batches.
		if _, err := d.GetReceipt(ctx, "fresh"); err != nil {
			t.Error(err)
		}
	}
	n, err := d.PruneExpired(ctx, now)
	if err != nil || n != 11 {
		t.Fatalf("PruneExpired = %d, %v; want 11 (10 receipts, 1 tombstone)", n, err)
	}
	// 13 due heap entries (10 + renewed's first + 2 tombstones) in batches of 3.
	if batches != 4 {
		t.Fatalf("%d batches, want 4 (3+3+3+3, then the last 1 with nothing more)", batches)
	}
	for _, id := range []string{"fresh", "renewed"} {
		if r, _ := d.GetReceipt(ctx, id); r == nil {
			t.Fatalf("receipt %s was pruned before it expired", id)
		}
	}
	if r, _ := d.GetReceipt(ctx, "old-4"); r != nil {
		t.Fatal("an expired receipt survived")
	}
	if f, _ := d.GetFile(ctx, "t/back.md"); f == nil || f.Tombstone {
		t.Fatalf("t/back.md = %+v, want the file", f)
	}
	if f, _ := d.GetFile(ctx, "t/gone.md"); f != nil {
		t.Fatalf("expired tombstone survived: %+v", f)
	}
	if n, err := d.PruneExpired(ctx, now); n != 0 || err != nil {
		t.Fatalf("second prune = %d, %v", n, err)
	}
	if e, _ := d.ListFiles(ctx, driver.ListParams{Prefix: "t/", Limit: 10}); len(e) != 1 || e[0].Path != "t/back.md" {
		t.Fatalf("list = %+v", e)
	}
}

func TestPruneStopsOnDoneContext(t *testing.T) {
	d := newDriver(t)
	now := time.Now()
	if err := d.ReserveReceipt(t.Context(), driver.Receipt{ID: "a", ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.PruneExpired(ctx, now); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// BenchmarkCreate is a store create (a new user's MEMORY.md) beside 1,000
// and 100,000 existing files: an insert into the ordered index, so the
// figures should stay close (logarithmic, not linear, in the file count).
func BenchmarkCreate(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			d := newDriver(b)
			for i := range n {
				if err := d.CreateFile(b.Context(), driver.File{Path: fmt.Sprintf("u%07d/MEMORY.md", i*2), Version: "v"}); err != nil {
					b.Fatal(err)
				}
			}
			s := store.New(d, nil)
			i := 0
			for b.Loop() {
				p := fmt.Sprintf("u%07d/MEMORY.md", i*2+1)
				if _, err := s.Write(b.Context(), store.WriteRequest{Path: p, Content: "- note"}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
