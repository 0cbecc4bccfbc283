package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// TestPruneInBatches: a prune with a batch size of 3 over 10 expired
// receipts (and 4 expired tombstones, 4 expired history entries) removes
// all of them, one transaction per batch, with the writer slot and
// SQLite's write lock free between batches, and keeps what has not
// expired.
func TestPruneInBatches(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	d := openTest(t, path, nil)
	other := openTest(t, path, &Options{BusyTimeout: time.Millisecond})
	d.pruneBatch = 3
	now := time.Now()
	for i := range 11 {
		exp := now.Add(-time.Minute)
		if i == 10 {
			exp = now.Add(time.Minute)
		}
		if err := d.ReserveReceipt(ctx, driver.Receipt{ID: fmt.Sprint("r", i), Kind: driver.KindWrite, CreatedAt: now, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("t/%d.md", i), Version: "v", Tombstone: true, ExpiresAt: now.Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		exp := now.Add(-time.Minute)
		if i == 4 {
			exp = now.Add(time.Minute)
		}
		if err := d.PutHistory(ctx, driver.HistoryEntry{Path: "h.md", Version: fmt.Sprint("v", i), Kind: driver.KindWrite, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	batches := 0
	d.pruneHook = func() {
		batches++
		select {
		case d.writer <- struct{}{}:
			<-d.writer
		default:
			t.Error("the writer slot is held between prune batches")
		}
		// Another connection writes at once: no transaction is open.
		if err := other.CreateFile(ctx, driver.File{Path: fmt.Sprintf("w/%d.md", batches), Content: "x", Version: "v"}); err != nil {
			t.Errorf("a write between batches: %v", err)
		}
	}
	n, err := d.PruneExpired(ctx, now)
	if err != nil || n != 18 {
		t.Fatalf("PruneExpired = %d, %v; want 18", n, err)
	}
	if batches != 4+2+2 { // receipts 3+3+3+1, tombstones 3+1, history entries 3+1
		t.Fatalf("%d transactions, want 8", batches)
	}
	if r, err := d.GetReceipt(ctx, "r10"); r == nil || err != nil {
		t.Fatalf("unexpired receipt = %v, %v", r, err)
	}
	if e, err := d.GetHistory(ctx, "h.md", "v4"); e == nil || err != nil {
		t.Fatalf("unexpired history entry = %v, %v", e, err)
	}
	if n, err := d.PruneExpired(ctx, now); n != 0 || err != nil {
		t.Fatalf("second prune = %d, %v", n, err)
	}
}

// TestPruneUsesTheIndexes: each batch finds its rows through an
// expires_at index, never a scan of the table.
func TestPruneUsesTheIndexes(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	for _, q := range []string{d.sql.pruneReceipts, d.sql.pruneTombstones, d.sql.pruneHistory} {
		text := queryPlan(t, d, q, 1, 10)
		if strings.Contains(text, "SCAN") || !strings.Contains(text, "(expires_at<?)") {
			t.Fatalf("prune does not use the expires_at index:\n%s\n%s", q, text)
		}
		t.Logf("plan: %s", text)
	}
}
