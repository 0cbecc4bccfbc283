package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// ver returns a 26-character version whose stem ends in n, as the store's
// versions are 26 characters of Crockford base32.
func ver(n int) string { return fmt.Sprintf("01JAAAAAAAAAAAAAAAAAA%05d", n) }

func getHistory(t *testing.T, d *Driver, path, version string) *driver.HistoryEntry {
	t.Helper()
	e, err := d.GetHistory(t.Context(), path, version)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestHistoryRidesInTheChange: Mutate and Append store the entry given to
// them, whole, exactly when they apply the change.
func TestHistoryRidesInTheChange(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	ctx := t.Context()
	now := time.UnixMilli(time.Now().UnixMilli())
	rcpt := func(id, version string) *driver.Receipt {
		return &driver.Receipt{ID: id, Fingerprint: "fp", Kind: driver.KindWrite, Path: "u/a.md", Version: version, Completed: true,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	entry := func(kind driver.Kind, version, previous, content string) *driver.HistoryEntry {
		return &driver.HistoryEntry{Path: "u/a.md", Version: version, Previous: previous, Kind: kind, OperationID: "op-" + version,
			Metadata: map[string]string{"updated_by": "u1", "run": "r1"}, Content: content, Time: now, ExpiresAt: now.Add(24 * time.Hour)}
	}
	// A create: the entry is stored as given.
	want := entry(driver.KindWrite, ver(1), "", "one\n\x00é")
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "one\n\x00é", Version: ver(1),
		Receipt: rcpt("c1", ver(1)), History: want}); err != nil {
		t.Fatal(err)
	}
	if got := getHistory(t, d, "u/a.md", ver(1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("entry of the create = %+v, want %+v", got, want)
	}
	// A failed condition, a known receipt and a delete of an absent path
	// record nothing.
	_, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "x", Expected: "stale", Version: ver(2),
		Receipt: rcpt("w2", ver(2)), History: entry(driver.KindWrite, ver(2), "stale", "x")})
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale write: %v", err)
	}
	res, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "u/a.md", Content: "x", Expected: ver(1), Version: ver(3),
		Receipt: rcpt("c1", ver(3)), History: entry(driver.KindWrite, ver(3), ver(1), "x")})
	if err != nil || res.Existing == nil {
		t.Fatalf("replayed write = %+v, %v", res, err)
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: "u/absent.md",
		History: &driver.HistoryEntry{Path: "u/absent.md", Version: ver(4), Kind: driver.KindDelete, Time: now}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{ver(2), ver(3)} {
		if e := getHistory(t, d, "u/a.md", v); e != nil {
			t.Fatalf("entry %s recorded for a change not applied: %+v", v, e)
		}
	}
	if e := getHistory(t, d, "u/absent.md", ver(4)); e != nil {
		t.Fatalf("entry recorded for the delete of an absent path: %+v", e)
	}
	// An append fills in Previous and Content.
	h := entry(driver.KindWrite, ver(5), "", "")
	if _, err := d.Append(ctx, driver.AppendParams{Path: "u/a.md", Entry: "two\n", MaxChars: 100, Version: ver(5), History: h}); err != nil {
		t.Fatal(err)
	}
	got := getHistory(t, d, "u/a.md", ver(5))
	if got == nil || got.Previous != ver(1) || got.Content != "one\n\x00é\ntwo\n" || got.Pending {
		t.Fatalf("entry of the append = %+v", got)
	}
	// An append to a missing file records nothing.
	if r, err := d.Append(ctx, driver.AppendParams{Path: "u/b.md", Entry: "x\n", MaxChars: 100, Version: ver(6),
		History: &driver.HistoryEntry{Path: "u/b.md", Version: ver(6), Kind: driver.KindWrite}}); err != nil || !r.Missing {
		t.Fatalf("append to a missing file = %+v, %v", r, err)
	}
	if e := getHistory(t, d, "u/b.md", ver(6)); e != nil {
		t.Fatalf("entry recorded for an append that wrote nothing: %+v", e)
	}
	// A delete's entry has no content.
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: "u/a.md", Expected: ver(5),
		History: entry(driver.KindDelete, ver(7), ver(5), "")}); err != nil {
		t.Fatal(err)
	}
	list, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "u/a.md ", Limit: 10})
	if err != nil || len(list) != 3 || list[0].Version != ver(7) || list[1].Version != ver(5) || list[2].Version != ver(1) {
		t.Fatalf("ListHistory = %+v, %v", list, err)
	}
}

// TestHistoryPointOperations: the pending life cycle, and versions that
// share a key's stem.
func TestHistoryPointOperations(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	ctx := t.Context()
	e := driver.HistoryEntry{Path: "p/a.md", Version: ver(1) + "op-1", Kind: driver.KindWrite, Content: "x", Pending: true}
	if err := d.PutHistory(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := d.PutHistory(ctx, e); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("second PutHistory: %v", err)
	}
	// Another version with the same stem is another entry.
	if got := getHistory(t, d, "p/a.md", ver(1)+"op-2"); got != nil {
		t.Fatalf("GetHistory of a version sharing the stem = %+v", got)
	}
	if err := d.CompleteHistory(ctx, "p/a.md", ver(1)+"op-2"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("CompleteHistory of a missing entry: %v", err)
	}
	if err := d.DropHistory(ctx, "p/a.md", ver(1)+"op-2"); err != nil {
		t.Fatalf("DropHistory of a missing entry: %v", err)
	}
	for range 2 { // completing twice is fine
		if err := d.CompleteHistory(ctx, e.Path, e.Version); err != nil {
			t.Fatal(err)
		}
	}
	if got := getHistory(t, d, e.Path, e.Version); got == nil || got.Pending || !got.Time.IsZero() || !got.ExpiresAt.IsZero() || got.Metadata != nil {
		t.Fatalf("completed entry = %+v", got)
	}
	if err := d.DropHistory(ctx, e.Path, e.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("DropHistory of a complete entry: %v", err)
	}
	e2 := driver.HistoryEntry{Path: "p/a.md", Version: ver(2), Kind: driver.KindWrite, Pending: true}
	if err := d.PutHistory(ctx, e2); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, e2.Path, e2.Version); err != nil {
		t.Fatal(err)
	}
	if got := getHistory(t, d, e2.Path, e2.Version); got != nil {
		t.Fatalf("dropped entry = %+v", got)
	}
}

// TestHistoryStatements: with history on, an idempotent change is still
// one transaction; the entry is one more statement in it.
func TestHistoryStatements(t *testing.T) {
	c := &stmtCounter{}
	d, err := open(t.Context(), filepath.Join(t.TempDir(), "m.db"), nil, c.install)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	defer s.Close()
	ctx := t.Context()
	op := func(id string) *store.Operation { return &store.Operation{ID: id, Fingerprint: "fp"} }
	m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- a", Operation: op("warm")})
	if err != nil {
		t.Fatal(err)
	}
	c.take()
	for _, step := range []struct {
		name           string
		stmts, commits int
		do             func() error
	}{
		{"write", 3, 1, func() (err error) {
			m, err = s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- b", Expected: m.Version, Operation: op("w")})
			return err
		}},
		{"replay", 2, 0, func() error {
			_, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- b", Expected: "stale", Operation: op("w")})
			return err
		}},
		// Receipt lookup, read, update, entry, receipt.
		{"append", 5, 1, func() (err error) {
			m, err = s.Append(ctx, store.AppendRequest{Path: "u/main/MEMORY.md", Text: "- c", MaxChars: 100, Operation: op("a")})
			return err
		}},
		{"delete", 3, 1, func() error {
			_, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/MEMORY.md", Expected: m.Version, Operation: op("d")})
			return err
		}},
		{"create", 4, 1, func() error {
			_, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- c", Operation: op("c")})
			return err
		}},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		stmts, commits, sql := c.take()
		if stmts != step.stmts || commits != step.commits {
			t.Fatalf("%s: %d statements, %d commits; want %d, %d: %q", step.name, stmts, commits, step.stmts, step.commits, sql)
		}
	}
	page, err := s.History(ctx, store.HistoryRequest{Path: "u/main/MEMORY.md", Limit: 10})
	if err != nil || len(page.Entries) != 5 {
		t.Fatalf("History = %+v, %v; want 5 entries", page, err)
	}
}

// TestHistoryQueriesUseTheIndex: a page of history is one ordered range
// search of the primary key, point operations use the key, a forget batch
// walks the key range and a prune batch the expires_at index.
func TestHistoryQueriesUseTheIndex(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	end, _ := driver.PrefixEnd("u/main/")
	for _, q := range []struct {
		name, sql, want string
		args            []any
	}{
		{"ListHistory", d.sql.listHistory, "(key>? AND key<?)", []any{"u/main/", "", 100, end}},
		{"ListHistory (all)", d.sql.listHistoryAll, "(key>?)", []any{"", "", 100}},
		{"DeleteHistory", d.sql.deleteHistory, "(key>? AND key<?)", []any{"u/main/", end, 100}},
		{"GetHistory", d.sql.getHistory, "(key=?)", []any{"k", "v"}},
		{"CompleteHistory", d.sql.completeHistory, "(key=?)", []any{"k", "v"}},
		{"DropHistory", d.sql.dropHistory, "(key=?)", []any{"k", "v"}},
		{"prune", d.sql.pruneHistory, "(expires_at<?)", []any{1, 100}},
	} {
		text := queryPlan(t, d, q.sql, q.args...)
		if strings.Contains(text, "SCAN") || strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, q.want) {
			t.Fatalf("%s does not search %s without a sort:\n%s", q.name, q.want, text)
		}
		t.Logf("%s plan: %s", q.name, text)
	}
}

// TestDeleteHistoryInBatches: a forget removes a prefix's entries (and no
// other's), one transaction per batch.
func TestDeleteHistoryInBatches(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	ctx := t.Context()
	d.pruneBatch = 3
	for i, p := range []string{"u1/a.md", "u1/a.md", "u1/b.md", "u1/c/d.md", "u1/c/d.md", "u1/e.md", "u1/f.md", "u1-b/a.md", "u10.md", "u0/a.md"} {
		if err := d.PutHistory(ctx, driver.HistoryEntry{Path: p, Version: ver(i), Kind: driver.KindWrite, Content: "x"}); err != nil {
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
			t.Error("the writer slot is held between batches")
		}
	}
	n, err := d.DeleteHistory(ctx, "u1/")
	if err != nil || n != 7 || batches != 3 {
		t.Fatalf("DeleteHistory = %d, %v in %d transactions; want 7 in 3", n, err, batches)
	}
	left, err := d.ListHistory(ctx, driver.HistoryParams{Limit: 100})
	if err != nil || len(left) != 3 || left[0].Path != "u0/a.md" || left[1].Path != "u1-b/a.md" || left[2].Path != "u10.md" {
		t.Fatalf("entries left = %+v, %v", left, err)
	}
	if n, err := d.DeleteHistory(ctx, ""); err != nil || n != 3 {
		t.Fatalf("DeleteHistory(\"\") = %d, %v", n, err)
	}
}

// TestHistoryTableAddedOnOpen: a database made before history existed
// gets the table (and its index) when it is next opened.
func TestHistoryTableAddedOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	d := openTest(t, path, nil)
	ctx := t.Context()
	if err := d.CreateFile(ctx, driver.File{Path: "a.md", Content: "x", Version: "v"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB().ExecContext(ctx, `DROP TABLE "agent_memory_history"`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openTest(t, path, nil)
	if err := d.PutHistory(ctx, driver.HistoryEntry{Path: "a.md", Version: ver(1), Kind: driver.KindWrite, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if f, err := d.GetFile(ctx, "a.md"); err != nil || f == nil || f.Content != "x" {
		t.Fatalf("file after the upgrade = %+v, %v", f, err)
	}
	var n int
	if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'agent_memory_hist_exp'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("expires_at index of the history: %d, %v", n, err)
	}
}
