package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/jackc/pgx/v5"
)

func newHistoryDriver(t *testing.T, tracer *counter, maxConns int32) *Driver {
	t.Helper()
	url := testURL(t)
	d, err := New(t.Context(), newPool(t, url, tracer, maxConns), &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every field of an entry round-trips, through PutHistory and through the
// mutation and append functions, NUL in the content included (kept in
// content_bytes, as for files); the mutation copies the file's content
// when the entry's is the same, and stores the entry's own otherwise.
func TestHistoryFieldsRoundTrip(t *testing.T) {
	d := newHistoryDriver(t, nil, 0)
	ctx := t.Context()
	now := time.Now().Truncate(time.Microsecond)
	meta := map[string]string{"updated_by": "u'1", "run": "r\"2"}
	check := func(name string, want driver.HistoryEntry) {
		t.Helper()
		got, err := d.GetHistory(ctx, want.Path, want.Version)
		if err != nil || got == nil {
			t.Fatalf("%s: GetHistory = %v, %v", name, got, err)
		}
		if got.Path != want.Path || got.Version != want.Version || got.Previous != want.Previous || got.Kind != want.Kind ||
			got.OperationID != want.OperationID || !maps.Equal(got.Metadata, want.Metadata) || got.Content != want.Content ||
			!got.Time.Equal(want.Time) || !got.ExpiresAt.Equal(want.ExpiresAt) || got.Pending != want.Pending {
			t.Fatalf("%s: entry\n%+v, want\n%+v", name, *got, want)
		}
	}
	put := driver.HistoryEntry{Path: "h/put.md", Version: "01J00000000000000000000001x", Previous: "v0", Kind: driver.KindWrite,
		OperationID: "op-1", Metadata: meta, Content: "a\x00b é", Time: now, ExpiresAt: now.Add(time.Hour), Pending: true}
	if err := d.PutHistory(ctx, put); err != nil {
		t.Fatal(err)
	}
	check("PutHistory", put)
	plain := driver.HistoryEntry{Path: "h/plain.md", Version: "01J00000000000000000000002", Kind: driver.KindDelete, Time: now}
	if err := d.PutHistory(ctx, plain); err != nil {
		t.Fatal(err)
	}
	check("PutHistory without metadata, operation or expiry", plain)

	// The mutation: the entry's content is the file's (sent once), then
	// one that differs (sent whole), then a delete.
	const path = "h/m.md"
	h1 := driver.HistoryEntry{Path: path, Version: "01J00000000000000000000010", Kind: driver.KindWrite, Metadata: meta,
		Content: "x\x00y", Time: now, ExpiresAt: now.Add(time.Hour)}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: path, Content: h1.Content, Version: h1.Version, History: &h1}); err != nil {
		t.Fatal(err)
	}
	check("Mutate, same content", h1)
	h2 := driver.HistoryEntry{Path: path, Version: "01J00000000000000000000011", Previous: h1.Version, Kind: driver.KindWrite,
		OperationID: "op-2", Content: "the entry's own\x00", Time: now, ExpiresAt: now.Add(time.Hour)}
	r := driver.Receipt{ID: "op-2", Fingerprint: "fp", Kind: driver.KindWrite, Path: path, Expected: h1.Version, Version: h2.Version,
		Existed: true, Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: path, Content: "the file's", Expected: h1.Version,
		Version: h2.Version, Receipt: &r, History: &h2}); err != nil {
		t.Fatal(err)
	}
	check("Mutate, other content", h2)
	if f, err := d.GetFile(ctx, path); err != nil || f.Content != "the file's" {
		t.Fatalf("file = %+v, %v", f, err)
	}
	h3 := driver.HistoryEntry{Path: path, Version: "01J00000000000000000000012", Previous: h2.Version, Kind: driver.KindDelete,
		Time: now, ExpiresAt: now.Add(time.Hour)}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: path, Expected: h2.Version, History: &h3}); err != nil {
		t.Fatal(err)
	}
	check("Mutate, delete", h3)

	// The append fills in the version replaced, the new content and the
	// row's metadata: the append's, with the replaced row's lifetime.
	const log = "h/log.md"
	expires := driver.FormatExpiry(now.Add(time.Hour))
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: log, Content: "a\x00 \n", Version: "01J00000000000000000000020",
		Metadata: map[string]string{driver.ExpiresKey: expires, "updated_by": "old"}}); err != nil {
		t.Fatal(err)
	}
	h4 := driver.HistoryEntry{Path: log, Version: "01J00000000000000000000021", Kind: driver.KindWrite, OperationID: "op-4", Metadata: meta,
		Time: now, ExpiresAt: now.Add(time.Hour)}
	ar := driver.Receipt{ID: "op-4", Fingerprint: "fp", Kind: driver.KindWrite, Path: log, Version: h4.Version, Completed: true,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if _, err := d.Append(ctx, driver.AppendParams{Path: log, Entry: "é\x00\n", MaxChars: 100, Version: h4.Version, Metadata: meta,
		Receipt: &ar, History: &h4, Now: driver.FormatExpiry(now)}); err != nil {
		t.Fatal(err)
	}
	h4.Previous, h4.Content = "01J00000000000000000000020", "a\x00\né\x00\n"
	h4.Metadata = driver.KeepLifetime(meta, map[string]string{driver.ExpiresKey: expires})
	check("Append", h4)
	if f, err := d.GetFile(ctx, log); err != nil || !maps.Equal(f.Metadata, h4.Metadata) {
		t.Fatalf("appended file = %+v, %v; want the metadata %v", f, err, h4.Metadata)
	}
	// A replay of the append records nothing more.
	h5 := h4
	h5.Version = "01J00000000000000000000022"
	if res, err := d.Append(ctx, driver.AppendParams{Path: log, Entry: "z\n", MaxChars: 100, Version: h5.Version, Receipt: &ar, History: &h5}); err != nil || res.Existing == nil {
		t.Fatalf("replayed append = %+v, %v", res, err)
	}
	if e, err := d.GetHistory(ctx, log, h5.Version); e != nil || err != nil {
		t.Fatalf("a replayed append recorded %+v, %v", e, err)
	}
	// Neither does an append to a missing file or over the bound.
	for _, p := range []driver.AppendParams{
		{Path: "h/none.md", Entry: "x\n", MaxChars: 100},
		{Path: log, Entry: "x\n", MaxChars: 3},
	} {
		p.Version = "01J00000000000000000000030"
		p.History = &driver.HistoryEntry{Path: p.Path, Version: p.Version, Kind: driver.KindWrite, Time: now}
		_, _ = d.Append(ctx, p)
		if e, err := d.GetHistory(ctx, p.Path, p.Version); e != nil || err != nil {
			t.Fatalf("an append that wrote nothing (%s, max %d) recorded %+v, %v", p.Path, p.MaxChars, e, err)
		}
	}
}

// The mutation records the entry only when its change applies: not on a
// failed check, nor on a replay, nor for the delete of an absent path;
// and the entry rides in the mutation's one round trip.
func TestHistoryOnlyWhenApplied(t *testing.T) {
	tr := &counter{}
	d := newHistoryDriver(t, tr, 1)
	ctx := t.Context()
	now := time.Now()
	entry := func(path, version, previous string, kind driver.Kind) *driver.HistoryEntry {
		return &driver.HistoryEntry{Path: path, Version: version, Previous: previous, Kind: kind, Content: "c", Time: now, ExpiresAt: now.Add(time.Hour)}
	}
	del := driver.MutateParams{Kind: driver.KindDelete, Path: "h/absent.md", History: entry("h/absent.md", "01J00000000000000000000001", "", driver.KindDelete)}
	if _, err := d.Mutate(ctx, del); err != nil {
		t.Fatal(err)
	}
	r := driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindWrite, Path: "h/a.md", Version: "01J00000000000000000000002", Completed: true,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	tr.take()
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "h/a.md", Content: "c", Version: r.Version, Receipt: &r,
		History: entry("h/a.md", r.Version, "", driver.KindWrite)}); err != nil {
		t.Fatal(err)
	}
	if q, p, sql := tr.take(); q != 1 || p != 0 { // the delete above prepared the statement
		t.Fatalf("a mutation with its entry took %d statements and %d prepares: %q", q, p, sql)
	}
	r2 := r
	r2.Version = "01J00000000000000000000003"
	if res, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "h/a.md", Content: "d", Expected: r.Version, Version: r2.Version,
		Receipt: &r2, History: entry("h/a.md", r2.Version, r.Version, driver.KindWrite)}); err != nil || res.Existing == nil {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "h/a.md", Content: "d", Expected: "stale", Version: "01J00000000000000000000004",
		History: entry("h/a.md", "01J00000000000000000000004", "stale", driver.KindWrite)}); err == nil {
		t.Fatal("a stale write landed")
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "h/a.md", Content: "d", Version: "01J00000000000000000000005",
		History: entry("h/a.md", "01J00000000000000000000005", "", driver.KindWrite)}); err == nil {
		t.Fatal("a create over a file landed")
	}
	got, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "h/", Limit: 100})
	if err != nil || len(got) != 1 || got[0].Version != r.Version {
		t.Fatalf("entries = %+v, %v; want only the applied write", got, err)
	}
}

// The Historian's point operations: PutHistory refuses a taken key,
// CompleteHistory and DropHistory tell pending, complete and missing
// entries apart, and a version sharing a key's stem is another entry.
func TestHistoryPointOperations(t *testing.T) {
	d := newHistoryDriver(t, nil, 0)
	ctx := t.Context()
	e := driver.HistoryEntry{Path: "p/a.md", Version: "01J000000000000000000000AAop", Kind: driver.KindWrite, Time: time.Now(), Pending: true}
	if err := d.PutHistory(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := d.PutHistory(ctx, e); !isPreconditionErr(err) {
		t.Fatalf("second PutHistory: %v, want ErrPrecondition", err)
	}
	other := "01J000000000000000000000AAother" // same key, another version
	if got, err := d.GetHistory(ctx, e.Path, other); got != nil || err != nil {
		t.Fatalf("GetHistory(other version) = %+v, %v", got, err)
	}
	if err := d.CompleteHistory(ctx, e.Path, other); !isPreconditionErr(err) {
		t.Fatalf("CompleteHistory(other version): %v, want ErrPrecondition", err)
	}
	if err := d.DropHistory(ctx, e.Path, other); err != nil {
		t.Fatalf("DropHistory(other version): %v", err)
	}
	for range 2 { // completing twice is fine
		if err := d.CompleteHistory(ctx, e.Path, e.Version); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := d.GetHistory(ctx, e.Path, e.Version); err != nil || got == nil || got.Pending {
		t.Fatalf("completed entry = %+v, %v", got, err)
	}
	if err := d.DropHistory(ctx, e.Path, e.Version); !isPreconditionErr(err) {
		t.Fatalf("DropHistory(complete): %v, want ErrPrecondition", err)
	}
	p := driver.HistoryEntry{Path: "p/b.md", Version: "01J000000000000000000000BB", Kind: driver.KindWrite, Time: time.Now(), Pending: true}
	if err := d.PutHistory(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, p.Path, p.Version); err != nil {
		t.Fatal(err)
	}
	if got, err := d.GetHistory(ctx, p.Path, p.Version); got != nil || err != nil {
		t.Fatalf("dropped entry = %+v, %v", got, err)
	}
	if err := d.CompleteHistory(ctx, p.Path, p.Version); !isPreconditionErr(err) {
		t.Fatalf("CompleteHistory(missing): %v, want ErrPrecondition", err)
	}
}

func isPreconditionErr(err error) bool { return errors.Is(err, driver.ErrPrecondition) }

// DeleteHistory removes a prefix's entries in statements of pruneBatch
// entries, and nothing outside the prefix: not a sibling folder whose name
// extends it, nor, for a prefix ending in a space, the entries of the
// shorter path whose keys the range holds.
func TestDeleteHistoryInBatches(t *testing.T) {
	d := newHistoryDriver(t, nil, 0)
	ctx := t.Context()
	now := time.Now()
	put := func(path string, n int) {
		for i := range n {
			if err := d.PutHistory(ctx, driver.HistoryEntry{Path: path, Version: fmt.Sprintf("01J%023d", i), Kind: driver.KindWrite, Time: now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("u1/a.md", 5)
	put("u1/b.md", 2)
	put("u1-b/a.md", 2)
	put("u2/a b.md", 2)
	put("u2/a", 2)
	d.pruneBatch = 3
	batches := 0
	d.pruneHook = func() { batches++ }
	if n, err := d.DeleteHistory(ctx, "u1/"); err != nil || n != 7 || batches != 3 {
		t.Fatalf("DeleteHistory(u1/) = %d, %v in %d statements; want 7 in 3", n, err, batches)
	}
	if n, err := d.DeleteHistory(ctx, "u2/a "); err != nil || n != 2 {
		t.Fatalf("DeleteHistory(%q) = %d, %v; want the 2 entries of %q", "u2/a ", n, err, "u2/a b.md")
	}
	left, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "u", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range left {
		paths = append(paths, e.Path)
	}
	if got, want := strings.Join(paths, ","), "u1-b/a.md,u1-b/a.md,u2/a,u2/a"; got != want {
		t.Fatalf("entries left: %s, want %s", got, want)
	}
}

// A page of history is a range scan of the history table's primary key,
// like a listing of files (the planner picks it on its own over 5,000
// entries of 50 users); so is a batch of DeleteHistory.
func TestHistoryQueriesUseTheIndex(t *testing.T) {
	d := newHistoryDriver(t, nil, 0)
	ctx := t.Context()
	h := d.sql.table + "_history"
	if _, err := d.pool.Exec(ctx, `INSERT INTO `+quote(h)+` (key, path, version, previous, kind, content, changed_at, pending)
		SELECT 'user' || (i % 50) || '/main/f' || (i % 7) || '.md ' || lpad(i::text, 26, '0'), 'user' || (i % 50) || '/main/f' || (i % 7) || '.md',
			'v' || i, '', 'write', repeat('x', 200), now(), false FROM generate_series(1, 5000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.pool.Exec(ctx, `ANALYZE `+quote(h)); err != nil {
		t.Fatal(err)
	}
	end, _ := driver.PrefixEnd("user7/")
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"ListHistory", d.sql.listHistory, []any{"user7/", "", 100, end}},
		{"DeleteHistory", d.sql.deleteHistoryBatch, []any{"user7/", 1000, end}},
	} {
		rows, err := d.pool.Query(ctx, "EXPLAIN "+q.sql, append([]any{pgx.QueryExecModeSimpleProtocol}, q.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "Index") || !strings.Contains(plan, h+"_pkey") || strings.Contains(plan, "Seq Scan") {
			t.Fatalf("%s does not range-scan the primary key:\n%s", q.name, plan)
		}
	}
	got, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "user7/", Limit: 1000})
	if err != nil || len(got) != 100 {
		t.Fatalf("ListHistory(user7/) = %d entries, %v; want 100", len(got), err)
	}
}

// A database whose functions have the argument lists of schema 3 is
// upgraded on the next start: the old functions are dropped (no overload
// is left beside the new ones), the history table is created, and a store
// with history on works at once.
func TestSchemaUpgradeFrom3(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	table := uniqueTable(t, url)
	ctx := t.Context()
	f, a := quote(table+"_mutate"), quote(table+"_append")
	t.Cleanup(func() { dropFunctions(t, url, table) })
	if _, err := pool.Exec(ctx, `CREATE TABLE `+quote(table)+` (path text COLLATE "C" PRIMARY KEY, content text NOT NULL, content_bytes bytea,
			version text NOT NULL, operation_id text, metadata jsonb, tombstone boolean NOT NULL DEFAULT false, expires_at timestamptz);
		CREATE FUNCTION `+f+`(`+oldMutateTypes+`) RETURNS void LANGUAGE sql AS 'SELECT';
		CREATE FUNCTION `+a+`(`+oldAppendTypes+`) RETURNS void LANGUAGE sql AS 'SELECT';
		COMMENT ON FUNCTION `+f+`(`+oldMutateTypes+`) IS 'agentmem schema 3'`); err != nil {
		t.Fatal(err)
	}
	d, err := New(ctx, pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var overloads int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname IN ($1, $2)`, table+"_mutate", table+"_append").Scan(&overloads); err != nil || overloads != 2 {
		t.Fatalf("%d functions after the upgrade (%v), want the 2 of the current schema", overloads, err)
	}
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	m, err := s.Write(ctx, store.WriteRequest{Path: "a/b.md", Content: "x\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, store.AppendRequest{Path: "a/b.md", Text: "y", MaxChars: 100}); err != nil {
		t.Fatal(err)
	}
	page, err := s.History(ctx, store.HistoryRequest{Path: "a/b.md", Limit: 10})
	if err != nil || len(page.Entries) != 2 || page.Entries[1].Version != m.Version || page.Entries[0].Content != "x\ny\n" {
		t.Fatalf("history after the upgrade = %+v, %v", page, err)
	}
}

// A database of schema 5 (the append function without p_now) is upgraded
// on the next process's start: the old append function is dropped, not
// left beside the new one, and appends keep a file's lifetime at once.
func TestSchemaUpgradeFrom5(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	table := uniqueTable(t, url)
	ctx := t.Context()
	t.Cleanup(func() { dropFunctions(t, url, table) })
	if _, err := New(ctx, pool, &Options{Table: table}); err != nil {
		t.Fatal(err)
	}
	f, a := quote(table+"_mutate"), quote(table+"_append")
	if _, err := pool.Exec(ctx, `DROP FUNCTION `+a+`;
		CREATE FUNCTION `+a+`(`+oldAppendTypes5+`) RETURNS SETOF `+quote(table+"_receipts")+` LANGUAGE sql AS 'SELECT * FROM `+
		quote(table+"_receipts")+` WHERE false';
		COMMENT ON FUNCTION `+f+`(`+mutateTypes+`) IS 'agentmem schema 5'`); err != nil {
		t.Fatal(err)
	}
	schemas.Delete(schemaKey(pool, table)) // as a process that starts now
	d, err := New(ctx, pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	var overloads int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname IN ($1, $2)`, table+"_mutate", table+"_append").Scan(&overloads); err != nil || overloads != 2 {
		t.Fatalf("%d functions after the upgrade (%v), want the 2 of the current schema", overloads, err)
	}
	var clock atomic.Int64 // Unix nanoseconds: the store's clock
	clock.Store(time.Now().UnixNano())
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	defer s.Close()
	at := time.Unix(0, clock.Load()).Add(time.Hour)
	if _, err := s.Write(ctx, store.WriteRequest{Path: "a/b.md", Content: "x\n", ExpiresAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, store.AppendRequest{Path: "a/b.md", Text: "y", MaxChars: 100, Metadata: map[string]string{"updated_by": "job"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(ctx, "a/b.md", 100)
	if err != nil || got.Content != "x\ny\n" || !got.ExpiresAt.Equal(at.Truncate(time.Millisecond)) || got.Metadata["updated_by"] != "job" {
		t.Fatalf("after the upgrade, the appended file = %+v, %v; want its expiry kept", got, err)
	}
	page, err := s.History(ctx, store.HistoryRequest{Path: "a/b.md", Limit: 10})
	if err != nil || len(page.Entries) != 2 || !page.Entries[0].ExpiresAt.Equal(got.ExpiresAt) {
		t.Fatalf("history after the upgrade = %+v, %v; want the append's entry with the expiry", page, err)
	}
	clock.Store(at.UnixNano()) // the file has expired: an append starts it anew
	if _, err := s.Append(ctx, store.AppendRequest{Path: "a/b.md", Text: "z", MaxChars: 100}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read(ctx, "a/b.md", 100); err != nil || got.Content != "z\n" || !got.ExpiresAt.IsZero() {
		t.Fatalf("append to the expired file = %+v, %v; want a new file of the entry alone", got, err)
	}
}

// dropFunctions drops the functions of table (its tables' cleanup leaves
// them).
func dropFunctions(t *testing.T, url, table string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP FUNCTION IF EXISTS `+quote(table+"_mutate")+`, `+quote(table+"_append")); err != nil {
		t.Error(err)
	}
}
