package firestore

import (
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

func testReceipt(id string, kind driver.Kind, path, version, expected string) *driver.Receipt {
	now := time.Now()
	return &driver.Receipt{ID: id, Fingerprint: "fp", Kind: kind, Path: path, Expected: expected, Version: version,
		Existed: expected != "", Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// TestSingleCommit pins which mutations take the one-Commit path and that
// its preconditions hold: a create, then replaces and a delete over the
// update time the driver saw; a replay, a stale memory and an unknown
// update time all fall back to the transaction, which decides.
func TestSingleCommit(t *testing.T) {
	ctx := t.Context()
	d, client := emulatorDriver(t)
	other, err := New(ctx, client, d.Collection().ID, nil) // another process's view
	if err != nil {
		t.Fatal(err)
	}
	// direct runs p on the one-Commit path only.
	direct := func(p driver.MutateParams) bool {
		t.Helper()
		m, err := d.newMutation(p)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := d.commit(ctx, m)
		if err != nil {
			t.Fatalf("commit %+v: %v", p, err)
		}
		return ok
	}
	w := func(version, expected, op string) driver.MutateParams {
		p := driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "c-" + version, Version: version, Expected: expected}
		if op != "" {
			p.Receipt = testReceipt(op, driver.KindWrite, "u/a.md", version, expected)
		}
		return p
	}
	if !direct(w("v1", "", "op1")) {
		t.Fatal("a create with a receipt did not commit directly")
	}
	if !direct(w("v2", "v1", "op2")) {
		t.Fatal("a replace over the version this driver wrote did not commit directly")
	}
	if !direct(w("v3", "v2", "")) {
		t.Fatal("a plain replace did not commit directly")
	}
	// A replay: the receipt exists, so the commit writes nothing.
	if direct(w("v9", "v3", "op2")) {
		t.Fatal("a replay committed")
	}
	if res, err := d.Mutate(ctx, w("v9", "v3", "op2")); err != nil || res.Existing == nil || res.Existing.Version != "v2" {
		t.Fatalf("replay through Mutate = %+v, %v", res, err)
	}
	if f, err := d.GetFile(ctx, "u/a.md"); err != nil || f.Version != "v3" {
		t.Fatalf("after the replay the row is %+v, %v; want v3", f, err)
	}
	// Another process writes v4: this driver's memory of v3 is stale.
	if _, err := other.Mutate(ctx, w("v4", "v3", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Mutate(ctx, w("v5", "v3", "op5")); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("write over a stale version: %v, want ErrPrecondition", err)
	}
	if r, err := d.GetReceipt(ctx, "op5"); err != nil || r != nil {
		t.Fatalf("a refused write left receipt %+v, %v", r, err)
	}
	// The transaction that refused it read v4 and its update time, but
	// another process has written v4b since: unknown here, so the
	// transaction writes.
	if _, err := other.Mutate(ctx, w("v4b", "v4", "")); err != nil {
		t.Fatal(err)
	}
	if direct(w("v6", "v4b", "op6")) {
		t.Fatal("a write over an unseen version committed directly")
	}
	if _, err := d.Mutate(ctx, w("v6", "v4b", "op6")); err != nil {
		t.Fatal(err)
	}
	// A stale memory of the right version (the row was rewritten with
	// the same fields by hand, so only its update time moved) fails the
	// commit's precondition, writes nothing, and the transaction applies.
	if _, err := d.GetFile(ctx, "u/a.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.fileRef("u/a.md").Update(ctx, []firestore.Update{{Path: fContent, Value: "touched"}}); err != nil {
		t.Fatal(err)
	}
	if direct(w("v7", "v6", "op7")) {
		t.Fatal("a commit over a stale update time applied")
	}
	if r, err := d.GetReceipt(ctx, "op7"); err != nil || r != nil {
		t.Fatalf("a failed commit left receipt %+v, %v", r, err)
	}
	if _, err := d.Mutate(ctx, w("v7", "v6", "op7")); err != nil {
		t.Fatal(err)
	}
	// A delete with a receipt over a version read by GetFile.
	if _, err := d.GetFile(ctx, "u/a.md"); err != nil {
		t.Fatal(err)
	}
	del := driver.MutateParams{Kind: driver.KindDelete, Path: "u/a.md", Expected: "v7", Receipt: testReceipt("op8", driver.KindDelete, "u/a.md", "", "v7")}
	if !direct(del) {
		t.Fatal("a delete with a receipt did not commit directly")
	}
	if f, err := d.GetFile(ctx, "u/a.md"); err != nil || f != nil {
		t.Fatalf("after the delete: %+v, %v", f, err)
	}
	if res, err := d.Mutate(ctx, del); err != nil || res.Existing == nil || res.Existing.Kind != driver.KindDelete {
		t.Fatalf("delete replay = %+v, %v", res, err)
	}
}

// TestSingleCommitResent is what follows when the client re-sends a
// direct Commit that had landed: the re-send fails its preconditions and
// the transaction runs with the same call state; it must recognise the
// landed commit as its own, never answer with the receipt as a replay,
// nor with ErrPrecondition.
func TestSingleCommitResent(t *testing.T) {
	ctx := t.Context()
	d, client := emulatorDriver(t)
	for i, p := range []driver.MutateParams{
		{Kind: driver.KindWrite, Path: "a.md", Content: "1", Version: "v1", Receipt: testReceipt("op1", driver.KindWrite, "a.md", "v1", "")},
		{Kind: driver.KindWrite, Path: "a.md", Content: "2", Version: "v2", Expected: "v1"},
		{Kind: driver.KindDelete, Path: "a.md", Expected: "v2", Receipt: testReceipt("op3", driver.KindDelete, "a.md", "", "v2")},
	} {
		m, err := d.newMutation(p)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := d.commit(ctx, m); !ok || err != nil {
			t.Fatalf("step %d: direct commit = %v, %v", i, ok, err)
		}
		if ok, err := d.commit(ctx, m); ok || err != nil {
			t.Fatalf("step %d: re-sent commit = %v, %v; want a failed precondition", i, ok, err)
		}
		if err := client.RunTransaction(ctx, m.run); err != nil || m.res.Existing != nil {
			t.Fatalf("step %d: transaction after the re-send = %+v, %v", i, m.res, err)
		}
	}
}

// TestReceiptForms reads both forms of a completed receipt: the packed one
// Mutate writes now, and the one field per value that Mutate wrote
// before it (still stored until it expires).
func TestReceiptForms(t *testing.T) {
	ctx := t.Context()
	d, _ := emulatorDriver(t)
	want := testReceipt("op-new", driver.KindWrite, "u/a.md", "v1", "")
	want.CreatedAt = want.CreatedAt.Truncate(time.Microsecond) // Firestore timestamps hold µs
	want.ExpiresAt = want.ExpiresAt.Truncate(time.Microsecond)
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "x", Version: "v1", Receipt: want}); err != nil {
		t.Fatal(err)
	}
	snap, err := d.receiptRef("op-new").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Data()[fReceipt]; !ok || len(snap.Data()) != 4 {
		t.Fatalf("Mutate's receipt document = %v, want the packed form", snap.Data())
	}
	old := *want
	old.ID = "op-old"
	doc := receiptData(old)
	doc[fAttempt] = "0123"
	if _, err := d.receiptRef("op-old").Create(ctx, doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*driver.Receipt{want, &old} {
		got, err := d.GetReceipt(ctx, w.ID)
		if err != nil || got == nil {
			t.Fatalf("GetReceipt(%s) = %v, %v", w.ID, got, err)
		}
		if !got.CreatedAt.Equal(w.CreatedAt) || !got.ExpiresAt.Equal(w.ExpiresAt) {
			t.Errorf("%s: times %v, %v; want %v, %v", w.ID, got.CreatedAt, got.ExpiresAt, w.CreatedAt, w.ExpiresAt)
		}
		got.CreatedAt, got.ExpiresAt = w.CreatedAt, w.ExpiresAt
		if *got != *w {
			t.Errorf("GetReceipt(%s) = %+v, want %+v", w.ID, *got, *w)
		}
	}
}
