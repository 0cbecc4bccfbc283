package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// TestPruneInBatches: a prune with a batch size of 3 over 10 expired
// receipts, 4 expired tombstones and 5 expired history entries removes
// all of them, one statement (and transaction) per batch, and keeps what
// has not expired; a row a writer holds is skipped, not waited for.
func TestPruneInBatches(t *testing.T) {
	ctx := t.Context()
	url := testURL(t)
	d, err := New(ctx, newPool(t, url, nil, 0), &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
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
	for i := range 6 {
		exp := now.Add(-time.Second)
		if i == 5 {
			exp = now.Add(time.Minute)
		}
		e := driver.HistoryEntry{Path: "h/a.md", Version: fmt.Sprintf("01J%023d", i), Kind: driver.KindWrite, Time: now, ExpiresAt: exp}
		if err := d.PutHistory(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A writer holds r0 in an open transaction.
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+quote(d.sql.table+"_receipts")+` WHERE id = 'r0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	batches := 0
	d.pruneHook = func() { batches++ }
	n, err := d.PruneExpired(ctx, now)
	if err != nil || n != 18 {
		t.Fatalf("PruneExpired = %d, %v; want 18 (r0 is held)", n, err)
	}
	if batches != 4+2+2 { // receipts 3+3+3+0, tombstones 3+1, history 3+2
		t.Fatalf("%d statements, want 8", batches)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := d.PruneExpired(ctx, now); n != 1 || err != nil {
		t.Fatalf("second prune = %d, %v; want r0", n, err)
	}
	if r, err := d.GetReceipt(ctx, "r10"); r == nil || err != nil {
		t.Fatalf("unexpired receipt = %v, %v", r, err)
	}
	if left, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "h/", Limit: 10}); len(left) != 1 || err != nil || left[0].Version != fmt.Sprintf("01J%023d", 5) {
		t.Fatalf("history left = %+v, %v; want the unexpired entry", left, err)
	}
}
