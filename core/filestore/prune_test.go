//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// lockFree reports whether the sidecar lock can be taken exclusively now.
func lockFree(t *testing.T, d *Driver) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(d.sidecar, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func markers(t *testing.T, d *Driver) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(d.expiryRoot(), func(name string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			out = append(out, name)
		}
		return nil
	})
	return out
}

// TestPruneInBatches: a prune with a batch size of 3 over 10 expired
// receipts removes all of them, releasing the lock after every batch, and
// keeps what has not expired.
func TestPruneInBatches(t *testing.T) {
	ctx := t.Context()
	d := newDriver(t, t.TempDir())
	d.pruneBatch = 3
	now := time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC)
	for i := range 10 {
		r := driver.Receipt{ID: fmt.Sprint("old-", i), Version: "v", ExpiresAt: now.Add(-time.Duration(i+1) * time.Second)}
		if err := d.ReserveReceipt(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "fresh", Version: "v", ExpiresAt: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	// Reserved with an early expiry and completed with a later one: kept.
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "renewed", Version: "v", ExpiresAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CompleteReceipt(ctx, driver.Receipt{ID: "renewed", Version: "v", Completed: true, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "u/gone.md", Version: "t1", Tombstone: true, ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	batches := 0
	d.pruneHook = func() {
		batches++
		if !lockFree(t, d) {
			t.Error("the lock is held between prune batches")
		}
	}
	n, err := d.PruneExpired(ctx, now)
	if err != nil || n != 11 {
		t.Fatalf("PruneExpired = %d, %v; want 11 (10 receipts, 1 tombstone)", n, err)
	}
	// Markers due: 10 + 1 tombstone in this minute's folder (4 batches of
	// ≤ 3), then renewed's first marker in an earlier folder (1 batch, and
	// that folder's removal).
	if batches < 5 {
		t.Fatalf("%d lock releases, want at least 5", batches)
	}
	for _, id := range []string{"fresh", "renewed"} {
		if r, err := d.GetReceipt(ctx, id); r == nil || err != nil {
			t.Fatalf("receipt %s = %v, %v; pruned before it expired", id, r, err)
		}
	}
	if r, _ := d.GetReceipt(ctx, "old-3"); r != nil {
		t.Fatal("an expired receipt survived")
	}
	if f, _ := d.GetFile(ctx, "u/gone.md"); f != nil {
		t.Fatalf("expired tombstone survived: %+v", f)
	}
	if m := markers(t, d); len(m) != 2 { // fresh and renewed's second
		t.Fatalf("markers left: %q", m)
	}
	if n, err := d.PruneExpired(ctx, now); n != 0 || err != nil {
		t.Fatalf("second prune = %d, %v", n, err)
	}
	if n, err := d.PruneExpired(ctx, now.Add(2*time.Hour)); n != 2 || err != nil {
		t.Fatalf("prune after every expiry = %d, %v", n, err)
	}
	if m := markers(t, d); len(m) != 0 {
		t.Fatalf("markers left: %q", m)
	}
	if e, _ := os.ReadDir(d.expiryRoot()); len(e) != 0 {
		t.Fatalf("minute folders left: %v", e)
	}
}

// TestPruneReadsFolderInChunks: a minute's folder holding more markers
// than one read returns (pruneReadChunk), due and not yet due interleaved,
// is settled whole: every due receipt goes, the others and the folder
// (its minute not over) stay.
func TestPruneReadsFolderInChunks(t *testing.T) {
	ctx := t.Context()
	d := newDriver(t, t.TempDir())
	now := time.Date(2026, 1, 1, 12, 0, 30, 0, time.UTC)
	const n = 2*pruneReadChunk + 300
	due := 0
	for i := range n {
		// Expiries spread over the whole minute: before now, then after.
		at := now.Truncate(time.Minute).Add(time.Duration(i) * time.Minute / n)
		if at.Before(now) {
			due++
		}
		if err := d.ReserveReceipt(ctx, driver.Receipt{ID: fmt.Sprint("r-", i), Version: "v", ExpiresAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.PruneExpired(ctx, now)
	if err != nil || got != due {
		t.Fatalf("PruneExpired = %d, %v; want %d", got, err, due)
	}
	for i := range n {
		at := now.Truncate(time.Minute).Add(time.Duration(i) * time.Minute / n)
		r, err := d.GetReceipt(ctx, fmt.Sprint("r-", i))
		if err != nil {
			t.Fatal(err)
		}
		if (r == nil) != at.Before(now) {
			t.Fatalf("receipt %d (expires %s, prune at %s): kept = %v", i, at.Format(time.TimeOnly), now.Format(time.TimeOnly), r != nil)
		}
	}
	if m := markers(t, d); len(m) != n-due {
		t.Fatalf("%d markers left, want %d", len(m), n-due)
	}
	if got, err := d.PruneExpired(ctx, now.Add(time.Minute)); err != nil || got != n-due {
		t.Fatalf("prune after the minute = %d, %v; want %d", got, err, n-due)
	}
	if e, _ := os.ReadDir(d.expiryRoot()); len(e) != 0 {
		t.Fatalf("minute folders left: %v", e)
	}
}

// TestPruneEmptyFolders: a past minute's folder found empty is removed
// only when nothing touched it for a minute (a crashed prune's leftover);
// one made just now is a writer's, about to put its marker in.
func TestPruneEmptyFolders(t *testing.T) {
	d := newDriver(t, t.TempDir())
	now := time.Now()
	fresh := filepath.Dir(d.markerPath(now.Add(-time.Hour), kindReceipt, receiptKey("a")))
	stale := filepath.Dir(d.markerPath(now.Add(-2*time.Hour), kindReceipt, receiptKey("b")))
	for _, dir := range []string{fresh, stale} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := now.Add(-2 * time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := d.PruneExpired(t.Context(), now); n != 0 || err != nil {
		t.Fatalf("PruneExpired = %d, %v", n, err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the untouched empty folder is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the folder made just now was removed: %v", err)
	}
}

// TestPruneStaleMarkers: a marker whose row was removed, replaced or
// rewritten is dropped without touching the row.
func TestPruneStaleMarkers(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	d := newDriver(t, dir)
	now := time.Now()
	past := now.Add(-time.Minute)
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "dropped", Version: "v", ExpiresAt: past}); err != nil {
		t.Fatal(err)
	}
	if err := d.DropReceipt(ctx, "dropped", "v"); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "u/back.md", Version: "t1", Tombstone: true, ExpiresAt: past}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceFile(ctx, driver.File{Path: "u/back.md", Version: "f1", Content: "back"}, "t1"); err != nil {
		t.Fatal(err)
	}
	if n, err := d.PruneExpired(ctx, now); n != 0 || err != nil {
		t.Fatalf("prune = %d, %v; want 0", n, err)
	}
	if f, _ := d.GetFile(ctx, "u/back.md"); f == nil || f.Content != "back" {
		t.Fatalf("u/back.md = %+v", f)
	}
	if m := markers(t, d); len(m) != 0 {
		t.Fatalf("stale markers left: %q", m)
	}
}

// TestExpiryIndexBuiltForOldDirectory: a directory without the index
// gets it from the next New, and prunes as before.
func TestExpiryIndexBuiltForOldDirectory(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	s := openWith(t, dir, &store.Options{ReceiptRetention: time.Hour, Now: clock})
	for i := range 5 {
		if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u%d/MEMORY.md", i), Content: "x", Operation: &store.Operation{ID: fmt.Sprint("op", i), Fingerprint: "fp"}}); err != nil {
			t.Fatal(err)
		}
	}
	d := newDriver(t, dir)
	if err := d.CreateFile(ctx, driver.File{Path: "u9/old.md", Version: "t", Tombstone: true, ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(d.expiryRoot()); err != nil {
		t.Fatal(err)
	}
	d = newDriver(t, dir)
	if m := markers(t, d); len(m) != 6 {
		t.Fatalf("rebuilt index has %d markers, want 6: %q", len(m), m)
	}
	if n, err := d.PruneExpired(ctx, now.Add(2*time.Hour)); n != 6 || err != nil {
		t.Fatalf("prune = %d, %v; want 6", n, err)
	}
	if e, _ := os.ReadDir(filepath.Join(d.sidecar, "receipts")); len(e) != 0 {
		t.Fatalf("receipts left: %v", e)
	}
}

// TestPruneTrash: a prune unlinks the rows it removes after releasing the
// lock, leaving nothing in the trash folder, and sweeps what a crashed
// prune left there.
func TestPruneTrash(t *testing.T) {
	ctx := t.Context()
	d := newDriver(t, t.TempDir())
	now := time.Now()
	if err := d.ReserveReceipt(ctx, driver.Receipt{ID: "old", Version: "v", ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "u/gone.md", Version: "t1", Tombstone: true, ExpiresAt: now.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	trash := filepath.Join(d.sidecar, trashDir)
	if err := os.MkdirAll(trash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trash, "r-left.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := d.PruneExpired(ctx, now); n != 2 || err != nil {
		t.Fatalf("PruneExpired = %d, %v; want 2", n, err)
	}
	if e, err := os.ReadDir(trash); err != nil || len(e) != 0 {
		t.Fatalf("trash holds %v (%v); want nothing", e, err)
	}
	if r, err := d.GetReceipt(ctx, "old"); r != nil || err != nil {
		t.Fatalf("receipt = %+v, %v; want it pruned", r, err)
	}
	if f, err := d.GetFile(ctx, "u/gone.md"); f != nil || err != nil {
		t.Fatalf("tombstone = %+v, %v; want it pruned", f, err)
	}
}

// TestMarkersWhilePruning: receipts reserved into a minute's folder that
// concurrent prunes keep emptying and removing (without the lock) are
// all reserved, each with its marker, never failing because the folder
// vanished between its creation and the marker's.
func TestMarkersWhilePruning(t *testing.T) {
	ctx := t.Context()
	d := newDriver(t, t.TempDir())
	at := time.Now().Add(-time.Hour).Truncate(time.Minute).Add(30 * time.Second)
	now := at.Add(time.Hour) // the folder of at's minute is past: a prune removes it once empty
	stop := make(chan struct{})
	pruned := make(chan int)
	go func() {
		total := 0
		for {
			select {
			case <-stop:
				pruned <- total
				return
			default:
			}
			n, err := d.PruneExpired(ctx, now)
			if err != nil {
				t.Error(err)
			}
			total += n
		}
	}()
	reserved := 0
	for i := range 500 {
		if err := d.ReserveReceipt(ctx, driver.Receipt{ID: fmt.Sprint("r", i), Version: "v", ExpiresAt: at}); err != nil {
			t.Errorf("reservation %d: %v", i, err)
			continue
		}
		reserved++
	}
	close(stop)
	total := <-pruned
	n, err := d.PruneExpired(ctx, now)
	if err != nil || total+n != reserved {
		t.Fatalf("pruned %d + %d (%v); want the %d reserved: a marker was lost", total, n, err, reserved)
	}
}
