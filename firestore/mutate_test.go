package firestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// emulatorDriver returns a driver over a fresh collection on the emulator.
func emulatorDriver(t *testing.T) (*Driver, *firestore.Client) {
	client := EmulatorClients(t, 1)[0]
	d, err := New(t.Context(), client, "c-"+RandomID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, client
}

// TestMutateRerunAfterLandedCommit runs a transaction function a second
// time after its commit landed, as the client does when a re-sent Commit
// comes back ABORTED: the function must recognise its own write and never
// report ErrPrecondition for it.
func TestMutateRerunAfterLandedCommit(t *testing.T) {
	ctx := t.Context()
	d, client := emulatorDriver(t)
	now := time.Now()
	receipt := func(id string, kind driver.Kind, version, expected string) *driver.Receipt {
		return &driver.Receipt{ID: id, Fingerprint: "fp", Kind: kind, Path: "a.md", Expected: expected, Version: version,
			Existed: expected != "", Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	// runTwice commits p, then re-runs the same transaction function.
	runTwice := func(p driver.MutateParams) (driver.MutateResult, error) {
		t.Helper()
		m, err := d.newMutation(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.RunTransaction(ctx, m.run); err != nil {
			t.Fatalf("first run of %+v: %v", p, err)
		}
		if m.res.Existing != nil {
			t.Fatalf("first run of %+v found a receipt", p)
		}
		err = client.RunTransaction(ctx, m.run)
		return m.res, err
	}
	check := func(what string, res driver.MutateResult, err error, want error) {
		t.Helper()
		if res.Existing != nil || !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("%s: re-run = %+v, %v; want %v", what, res, err, want)
		}
	}

	res, err := runTwice(driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Content: "1", Version: "v1", Receipt: receipt("op1", driver.KindWrite, "v1", "")})
	check("create with receipt", res, err, nil)
	res, err = runTwice(driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Content: "2", Version: "v2", Expected: "v1"})
	check("plain replace", res, err, nil)
	res, err = runTwice(driver.MutateParams{Kind: driver.KindDelete, Path: "a.md", Expected: "v2", Receipt: receipt("op2", driver.KindDelete, "", "v2")})
	check("delete with receipt", res, err, nil)
	res, err = runTwice(driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Content: "3", Version: "v3"})
	check("plain create", res, err, nil)
	res, err = runTwice(driver.MutateParams{Kind: driver.KindDelete, Path: "a.md", Expected: "v3"})
	check("plain delete (no evidence)", res, err, errUnknown)

	// Another call of the same operation is answered by the receipt.
	r, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Content: "1", Version: "v9", Receipt: receipt("op1", driver.KindWrite, "v9", "")})
	if err != nil || r.Existing == nil || r.Existing.Version != "v1" {
		t.Fatalf("replay = %+v, %v", r, err)
	}
	// A stale version is a precondition failure, and nothing is written.
	_, err = d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Content: "x", Version: "v10", Expected: "v3", Receipt: receipt("op3", driver.KindWrite, "v10", "v3")})
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale mutate: %v", err)
	}
	if got, err := d.GetReceipt(ctx, "op3"); err != nil || got != nil {
		t.Fatalf("a failed mutate left receipt %+v, %v", got, err)
	}
}

// TestConditionFailedRetriedWrite replays what the client does when it
// re-sends a Commit whose reply was lost: the second send fails its
// precondition, and the primitives must see their own write in the re-read.
func TestConditionFailedRetriedWrite(t *testing.T) {
	ctx := t.Context()
	d, _ := emulatorDriver(t)
	f := driver.File{Path: "a/b.md", Content: "x", Version: "v1"}
	if err := d.CreateFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, f); err != nil {
		t.Fatalf("create whose earlier send landed: %v", err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "a/b.md", Version: "v2"}); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("create over another row: %v", err)
	}
	r := driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindWrite, Path: "a/b.md", Version: "v1"}
	for range 2 {
		if err := d.ReserveReceipt(ctx, r); err != nil {
			t.Fatalf("reserve whose earlier send landed: %v", err)
		}
	}
	r.Completed = true
	for range 2 {
		if err := d.CompleteReceipt(ctx, r); err != nil {
			t.Fatalf("complete: %v", err)
		}
	}
	if err := d.DropReceipt(ctx, "op", "v1"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop of a completed receipt: %v", err)
	}
	// What a re-sent conditional delete meets once the first send landed:
	// a condition failure, which DeleteFile must not report as
	// ErrPrecondition (it re-reads, finds no row, and reports an unknown
	// outcome).
	snap, err := d.fileRef(f.Path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Ref.Delete(ctx, firestore.LastUpdateTime(snap.UpdateTime)); err != nil {
		t.Fatal(err)
	}
	_, err = snap.Ref.Delete(context.WithoutCancel(ctx), firestore.LastUpdateTime(snap.UpdateTime))
	if !conditionFailed(err) {
		t.Fatalf("second conditional delete: %v", err)
	}
}

// TestMutateContentionTakesNoLocks appends to one shared file from many
// writers with a client that runs each transaction only once, so that any
// transaction lock contention would end in ABORTED (it did: the emulator's
// "Transaction lock timeout"): writes must be decided by Commits with
// preconditions and plain reads, and store.Append must land every line
// exactly once.
func TestMutateContentionTakesNoLocks(t *testing.T) {
	client := EmulatorClients(t, 1)[0]
	d, err := New(t.Context(), client, "c-"+RandomID(), &Options{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, nil)
	const w, n = 12, 5
	var wg sync.WaitGroup
	errs := make(chan error, w*n)
	for i := range w {
		wg.Go(func() {
			for j := range n {
				line := fmt.Sprintf("w%d-%d", i, j)
				_, err := s.Append(t.Context(), store.AppendRequest{Path: "shared.md", Text: line, MaxChars: 1 << 16,
					Operation: &store.Operation{ID: "op-" + line, Fingerprint: "fp-" + line}})
				if err != nil {
					errs <- fmt.Errorf("append %s: %w", line, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f, err := s.Read(t.Context(), "shared.md", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(f.Content, "\n"); got != w*n {
		t.Errorf("file has %d lines, want %d:\n%s", got, w*n, f.Content)
	}
}
