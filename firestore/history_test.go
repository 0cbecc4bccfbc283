package firestore

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// testEntry is a complete entry of path at version, with µs times (what
// Firestore timestamps hold).
func testEntry(path, version, previous string) driver.HistoryEntry {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return driver.HistoryEntry{Path: path, Version: version, Previous: previous, Kind: driver.KindWrite,
		Content: "content of " + version, Metadata: map[string]string{"by": version}, Time: now, ExpiresAt: now.Add(time.Hour)}
}

// entries lists every entry of path.
func entries(t *testing.T, d *Driver, path string) []driver.HistoryEntry {
	t.Helper()
	got, err := d.ListHistory(t.Context(), driver.HistoryParams{Prefix: path + " ", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestHistorian pins the point operations, the ordered listing and the
// batched removal of history entries.
func TestHistorian(t *testing.T) {
	ctx := t.Context()
	d, _ := emulatorDriver(t)

	// Versions are ULID-like; a later one lists first within a path.
	v := func(i int) string { return fmt.Sprintf("01J%023d", i) }
	pending := testEntry("u/a.md", v(2), v(1))
	pending.Pending = true
	pending.OperationID = "op/2"
	first := testEntry("u/a.md", v(1), "")
	first.Metadata = nil
	del := driver.HistoryEntry{Path: "u/a.md", Version: v(3), Previous: v(2), Kind: driver.KindDelete, Time: first.Time, ExpiresAt: first.ExpiresAt}
	for _, e := range []driver.HistoryEntry{pending, first, del, testEntry("u/a.md.bak", v(1), ""), testEntry("u/b.md", v(1), ""), testEntry("v/a.md", v(1), "")} {
		if err := d.PutHistory(ctx, e); err != nil {
			t.Fatalf("PutHistory(%s %s): %v", e.Path, e.Version, err)
		}
	}
	if err := d.PutHistory(ctx, first); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("PutHistory of an existing key: %v, want ErrPrecondition", err)
	}
	// A re-send of a landed create (same attempt token) is this call's own.
	resent := testEntry("u/c.md", v(1), "")
	for i := range 2 {
		if err := d.putHistory(ctx, resent, "token"); err != nil {
			t.Fatalf("send %d of one PutHistory: %v", i, err)
		}
	}
	if err := d.putHistory(ctx, resent, "other"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("another PutHistory of the key: %v, want ErrPrecondition", err)
	}

	// The TTL policy on expiresAt covers entries; they have no path field.
	snap, err := d.historyRef(first.Key()).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := snap.Data()[fExpiresAt].(time.Time); !ok || !at.Equal(first.ExpiresAt) || snap.Data()[fPath] != nil || !strings.HasPrefix(snap.Ref.ID, "h~") {
		t.Fatalf("entry document %s = %v", snap.Ref.ID, snap.Data())
	}

	// Every field round-trips; the newest entry lists first.
	got := entries(t, d, "u/a.md")
	want := []driver.HistoryEntry{del, pending, first}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries of u/a.md:\n got %+v\nwant %+v", got, want)
	}
	// Pages by After, and a folder prefix: by path, then newest first.
	var keys []string
	after := ""
	for {
		page, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "u/", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			keys = append(keys, e.Path+"@"+e.Version[len(e.Version)-1:])
			after = e.Key()
		}
		if len(page) < 2 {
			break
		}
	}
	if s := strings.Join(keys, " "); s != "u/a.md@3 u/a.md@2 u/a.md@1 u/a.md.bak@1 u/b.md@1 u/c.md@1" {
		t.Fatalf("pages of u/: %s", s)
	}

	// GetHistory: by path and version; a version sharing the key's first 26
	// characters is another version.
	if e, err := d.GetHistory(ctx, "u/a.md", v(2)); err != nil || e == nil || !reflect.DeepEqual(*e, pending) {
		t.Fatalf("GetHistory = %+v, %v", e, err)
	}
	for _, ver := range []string{v(2) + "-fence", v(9), "x/y"} {
		if e, err := d.GetHistory(ctx, "u/a.md", ver); err != nil || e != nil {
			t.Fatalf("GetHistory(%q) = %+v, %v; want none", ver, e, err)
		}
	}

	// Complete and drop.
	if err := d.CompleteHistory(ctx, "u/a.md", v(9)); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("CompleteHistory of a missing entry: %v", err)
	}
	for range 2 {
		if err := d.CompleteHistory(ctx, "u/a.md", v(2)); err != nil {
			t.Fatalf("CompleteHistory: %v", err)
		}
	}
	if e, err := d.GetHistory(ctx, "u/a.md", v(2)); err != nil || e == nil || e.Pending {
		t.Fatalf("after CompleteHistory: %+v, %v", e, err)
	}
	if err := d.DropHistory(ctx, "u/a.md", v(2)); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("DropHistory of a complete entry: %v", err)
	}
	p := testEntry("u/a.md", v(4), v(3))
	p.Pending = true
	if err := d.PutHistory(ctx, p); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := d.DropHistory(ctx, "u/a.md", v(4)); err != nil {
			t.Fatalf("DropHistory: %v", err)
		}
	}
	if n := len(entries(t, d, "u/a.md")); n != 3 {
		t.Fatalf("u/a.md has %d entries after the drop, want 3", n)
	}

	// Limits: a key over 1,500 bytes is refused; none is ever found.
	long := strings.Repeat("p/", 737) + "x" // 1,475 bytes: key 1,502
	if err := d.PutHistory(ctx, testEntry(long, v(1), "")); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("PutHistory of a %d-byte path: %v, want ErrTooLarge", len(long), err)
	}
	if e, err := d.GetHistory(ctx, long, v(1)); err != nil || e != nil {
		t.Fatalf("GetHistory of a %d-byte path = %+v, %v", len(long), e, err)
	}
	big := testEntry("u/big.md", v(1), "")
	big.Content = strings.Repeat("x", 1<<20)
	if err := d.PutHistory(ctx, big); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("PutHistory of 1 MiB of content: %v, want ErrTooLarge", err)
	}

	// DeleteHistory in batches of 3: the prefix's entries, no others.
	d.historyBatch = 3
	for i := range 5 {
		if err := d.PutHistory(ctx, testEntry("u/many.md", v(i+1), "")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.DeleteHistory(ctx, "u/")
	if err != nil || n != 11 {
		t.Fatalf("DeleteHistory(u/) = %d, %v; want 11", n, err)
	}
	if got, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "", Limit: 100}); err != nil || len(got) != 1 || got[0].Path != "v/a.md" {
		t.Fatalf("entries left: %+v, %v", got, err)
	}
	// Files and receipts are never listed as entries, nor entries as files.
	if err := d.CreateFile(ctx, driver.File{Path: "u/a.md", Version: v(1)}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutHistory(ctx, testEntry("u/a.md", v(1), "")); err != nil {
		t.Fatal(err)
	}
	files, err := d.ListFiles(ctx, driver.ListParams{Limit: 100})
	if err != nil || len(files) != 1 {
		t.Fatalf("ListFiles = %+v, %v", files, err)
	}
	if got, err := d.ListHistory(ctx, driver.HistoryParams{Limit: 100}); err != nil || len(got) != 2 {
		t.Fatalf("ListHistory = %+v, %v", got, err)
	}
}

// TestMutateHistory checks the entry on every path of Mutate: in the
// single Commit, in the Commit that follows a look, and in the
// transaction; only when the change applies, and once when a commit is
// re-sent or a transaction function re-run after its commit landed.
func TestMutateHistory(t *testing.T) {
	ctx := t.Context()
	d, client := emulatorDriver(t)
	const path = "h/a.md"
	v := func(i int) string { return fmt.Sprintf("01J%023d", i) }
	write := func(i int, expected, op string) driver.MutateParams {
		p := driver.MutateParams{Kind: driver.KindWrite, Path: path, Content: fmt.Sprint("c", i), Version: v(i), Expected: expected}
		if op != "" {
			p.Receipt = testReceipt(op, driver.KindWrite, path, p.Version, expected)
		}
		e := testEntry(path, p.Version, expected)
		e.Content, e.OperationID = p.Content, op
		p.History = &e
		return p
	}
	remove := func(i int, expected, op string) driver.MutateParams {
		p := driver.MutateParams{Kind: driver.KindDelete, Path: path, Expected: expected}
		if op != "" {
			p.Receipt = testReceipt(op, driver.KindDelete, path, "", expected)
		}
		e := testEntry(path, v(i), expected)
		e.Kind, e.Content, e.OperationID = driver.KindDelete, "", op
		p.History = &e
		return p
	}
	var made []string // versions of the entries, oldest first
	check := func(step string) {
		t.Helper()
		got := entries(t, d, path)
		if len(got) != len(made) {
			t.Fatalf("%s: %d entries, want %d: %+v", step, len(got), len(made), got)
		}
		for i, e := range got {
			if w := made[len(made)-1-i]; e.Version != w || e.Pending {
				t.Fatalf("%s: entry %d is %s (pending %v), want %s", step, i, e.Version, e.Pending, w)
			}
		}
	}
	// commitTwice sends the single Commit, then again as the client's
	// re-send after a lost reply, then lets the transaction decide.
	commitTwice := func(p driver.MutateParams) {
		t.Helper()
		m, err := d.newMutation(p)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := d.commit(ctx, m); !ok || err != nil {
			t.Fatalf("direct commit of %s = %v, %v", p.History.Version, ok, err)
		}
		if ok, err := d.commit(ctx, m); ok || err != nil {
			t.Fatalf("re-sent commit = %v, %v; want a failed precondition", ok, err)
		}
		if err := client.RunTransaction(ctx, m.run); err != nil || m.res.Existing != nil {
			t.Fatalf("transaction after the re-send = %+v, %v", m.res, err)
		}
	}
	// runTwice runs the transaction function twice, as after ABORTED.
	runTwice := func(p driver.MutateParams) error {
		t.Helper()
		m, err := d.newMutation(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.RunTransaction(ctx, m.run); err != nil {
			t.Fatalf("first run: %v", err)
		}
		return client.RunTransaction(ctx, m.run)
	}

	// The single Commit: a create, a replace, a delete with a receipt.
	commitTwice(write(1, "", "op1"))
	made = append(made, v(1))
	commitTwice(write(2, v(1), ""))
	made = append(made, v(2))
	check("single commits")

	// A replay and a stale write record nothing.
	if res, err := d.Mutate(ctx, write(3, v(2), "op1")); err != nil || res.Existing == nil {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	if _, err := d.Mutate(ctx, write(3, v(1), "op3")); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale write: %v", err)
	}
	check("replay and stale write")

	// A look, then a Commit: the row was touched (same version, new update
	// time), so the first Commit fails and the second lands.
	if _, err := d.fileRef(path).Update(ctx, []firestore.Update{{Path: fContent, Value: "touched"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Mutate(ctx, write(4, v(2), "op4")); err != nil {
		t.Fatal(err)
	}
	made = append(made, v(4))
	check("commit after a look")

	// The transaction: re-runs after a landed commit record nothing more.
	if err := runTwice(write(5, v(4), "op5")); err != nil {
		t.Fatal(err)
	}
	made = append(made, v(5))
	if err := runTwice(remove(6, v(5), "")); !errors.Is(err, errUnknown) {
		t.Fatalf("re-run plain delete: %v, want errUnknown", err)
	}
	made = append(made, v(6))
	check("transactions")
	// A delete of an absent path records none, nor does one refused.
	if _, err := d.Mutate(ctx, remove(7, "", "op7")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Mutate(ctx, remove(8, "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Mutate(ctx, remove(9, v(5), "op9")); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete of a deleted version: %v", err)
	}
	check("deletes of an absent path")
	// A delete with a receipt through the single Commit.
	commitTwice(write(10, "", ""))
	made = append(made, v(10))
	commitTwice(remove(11, v(10), "op11"))
	made = append(made, v(11))
	check("single-commit delete")

	// A write whose entry is over the limits writes nothing.
	long := strings.Repeat("p/", 737) + "x" // a row fits, a key of 1,502 bytes does not
	p := write(12, "", "op12")
	p.Path, p.Receipt.Path, p.History.Path = long, long, long
	if _, err := d.Mutate(ctx, p); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("write with a 1,502-byte history key: %v, want ErrTooLarge", err)
	}
	if f, err := d.GetFile(ctx, long); err != nil || f != nil {
		t.Fatalf("a refused write left %+v, %v", f, err)
	}
}
