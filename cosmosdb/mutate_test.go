package cosmosdb_test

import (
	"errors"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

func receipt(id string, kind driver.Kind, path, version, expected string) *driver.Receipt {
	now := time.Now()
	return &driver.Receipt{ID: id, Fingerprint: "fp", Kind: kind, Path: path, Expected: expected, Version: version,
		Existed: expected != "", Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// TestMutateBatch covers Driver.Mutate's batch: a create, a replace over a
// cached ETag (1 request), a stale ETag of the expected version (retried
// with the fresh one), a changed version (ErrPrecondition, no receipt
// written), a replay (the receipt, before the version), deletes, and a
// receipt written in the file's partition that another process finds.
func TestMutateBatch(t *testing.T) {
	db := newDatabase(t)
	d, rq := db.countedDriver(t)
	other := db.reopen(t, d)
	ctx := t.Context()
	w := func(version, expected, op string) driver.MutateParams {
		p := driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "c-" + version, Version: version, Expected: expected}
		if op != "" {
			p.Receipt = receipt(op, driver.KindWrite, "u/a.md", version, expected)
		}
		return p
	}
	mutate := func(what string, p driver.MutateParams, want int64) driver.MutateResult {
		t.Helper()
		before := rq.count()
		res, err := d.Mutate(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := rq.count() - before; n != want {
			t.Fatalf("%s: %d requests, want %d", what, n, want)
		}
		return res
	}
	mutate("create", w("v1", "", "op1"), 1)
	mutate("replace over the ETag of its own write", w("v2", "v1", "op2"), 1)
	mutate("plain replace", w("v3", "v2", ""), 1)
	if res := mutate("replay", w("v9", "v3", "op2"), 2); res.Existing == nil || res.Existing.Version != "v2" {
		t.Fatalf("replay = %+v", res)
	}
	// The receipt answers before the version, also when a read (no ETag
	// cached for v1) finds the
	// version changed.
	if res := mutate("replay over a stale version", w("v9", "v1", "op1"), 2); res.Existing == nil || res.Existing.Version != "v1" {
		t.Fatalf("replay over a stale version = %+v", res)
	}
	// Another process rewrites v3 with the same version: d's ETag is stale.
	if err := other.ReplaceFile(ctx, driver.File{Path: "u/a.md", Content: "again", Version: "v3"}, "v3"); err != nil {
		t.Fatal(err)
	}
	mutate("stale ETag, same version", w("v4", "v3", "op4"), 3) // 412, read, batch
	// Another process writes v5 behind d's cache.
	if err := other.ReplaceFile(ctx, driver.File{Path: "u/a.md", Content: "five", Version: "v5"}, "v4"); err != nil {
		t.Fatal(err)
	}
	before := rq.count()
	if _, err := d.Mutate(ctx, w("v6", "v4", "op6")); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("write over a changed version: %v, want ErrPrecondition", err)
	}
	if n := rq.count() - before; n != 3 { // 412, read, receipt lookup
		t.Fatalf("write over a changed version: %d requests, want 3", n)
	}
	if r, err := other.GetReceipt(ctx, "op6"); err != nil || r != nil {
		t.Fatalf("a refused write left receipt %+v, %v", r, err)
	}
	if _, err := d.Mutate(ctx, w("v6", "", "op6")); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("create over a file: %v, want ErrPrecondition", err)
	}
	// Another process finds op4's receipt, which lives in u/a.md's
	// partition, by the operation id alone.
	if r, err := other.GetReceipt(ctx, "op4"); err != nil || r == nil || r.Version != "v4" || !r.Completed {
		t.Fatalf("receipt from another process = %+v, %v", r, err)
	}
	// Deletes: with a receipt, then its replay, then of an absent path.
	if _, err := d.GetFile(ctx, "u/a.md"); err != nil {
		t.Fatal(err)
	}
	del := driver.MutateParams{Kind: driver.KindDelete, Path: "u/a.md", Expected: "v5", Receipt: receipt("op7", driver.KindDelete, "u/a.md", "", "v5")}
	mutate("delete", del, 1)
	if f, err := other.GetFile(ctx, "u/a.md"); err != nil || f != nil {
		t.Fatalf("after the delete: %+v, %v", f, err)
	}
	if res := mutate("delete replay", del, 2); res.Existing == nil || res.Existing.Kind != driver.KindDelete {
		t.Fatalf("delete replay = %+v", res)
	}
	absent := driver.MutateParams{Kind: driver.KindDelete, Path: "u/a.md", Receipt: receipt("op8", driver.KindDelete, "u/a.md", "", "")}
	mutate("delete of an absent path", absent, 2) // read, batch of the receipt
	if r, err := other.GetReceipt(ctx, "op8"); err != nil || r == nil || r.Existed {
		t.Fatalf("receipt of the delete of an absent path = %+v, %v", r, err)
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: "u/a.md", Expected: "v5"}); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete of a missing row: %v", err)
	}
	// Receipts are never listed.
	if es, err := other.ListFiles(ctx, driver.ListParams{Prefix: "u/", Limit: 10}); err != nil || len(es) != 0 {
		t.Fatalf("listing = %+v, %v", es, err)
	}
}
