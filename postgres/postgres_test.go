package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestHostileTableNamesRejected(t *testing.T) {
	for _, name := range []string{
		"agent-memory", "agent_memory; DROP TABLE users", "1memory", strings.Repeat("a", 53),
		`a"b`, "ta ble", "tablé", "x\x00", "public.agent_memory",
	} {
		// Open validates before it parses the URL or connects.
		if _, err := openPool(t.Context(), "postgres://nowhere.invalid:1/x", &Options{Table: name}); !errors.Is(err, ErrInvalidTable) {
			t.Errorf("openPool(%q): %v, want ErrInvalidTable", name, err)
		}
		if _, err := New(t.Context(), nil, &Options{Table: name}); !errors.Is(err, ErrInvalidTable) {
			t.Errorf("New(%q): %v, want ErrInvalidTable", name, err)
		}
	}
	for _, name := range []string{"", "_x", "Mixed_Case", strings.Repeat("a", 52)} {
		if _, err := tableOf(&Options{Table: name}); err != nil {
			t.Errorf("tableOf(%q): %v", name, err)
		}
	}
}

func TestQuotedTableNames(t *testing.T) {
	// Names are quoted: a reserved word and mixed case work as given; so
	// does the longest name (52 characters), whose derived names stay
	// within 63 bytes (PostgreSQL shortens the primary keys' names).
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	long := "Long_" + uniqueTable(t, url)
	long += strings.Repeat("x", 52-len(long))
	for _, name := range []string{"select", "Mixed_" + uniqueTable(t, url), long} {
		t.Cleanup(func() { uniqueTableDrop(t, url, name) })
		d, err := New(t.Context(), pool, &Options{Table: name})
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
		m, err := s.Write(t.Context(), store.WriteRequest{Path: "a/b.md", Content: "x", Operation: &store.Operation{ID: "op", Fingerprint: "fp"}})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if f, err := s.Read(t.Context(), "a/b.md", 10); err != nil || f.Version != m.Version {
			t.Fatalf("%q: read %+v, %v", name, f, err)
		}
		if h, err := s.History(t.Context(), store.HistoryRequest{Path: "a/b.md", Limit: 10}); err != nil || len(h.Entries) != 1 {
			t.Fatalf("%q: history %+v, %v", name, h, err)
		}
	}
}

// uniqueTableDrop drops the schema of a table the test named itself.
func uniqueTableDrop(t testing.TB, url, name string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %s, %s, %s CASCADE`, quote(name+"_history"), quote(name+"_receipts"), quote(name))); err != nil {
		t.Error(err)
	}
}

// TestSchemaPerSearchPath checks that one table name used by pools whose
// search_path names different schemas of one database gets its tables in
// each: the once-per-process schema registry must tell them apart.
func TestSchemaPerSearchPath(t *testing.T) {
	base := testURL(t)
	table := uniqueTable(t, base)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	for _, schema := range []string{table + "_s1", table + "_s2"} {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA `+quote(schema)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := conn.Exec(context.Background(), `DROP SCHEMA `+quote(schema)+` CASCADE`); err != nil {
				t.Error(err)
			}
		})
		cfg, err := pgxpool.ParseConfig(base)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if _, err := New(ctx, pool, &Options{Table: table}); err != nil {
			t.Fatal(err)
		}
		var found bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, quote(schema)+"."+quote(table+"_history")).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if !found {
			t.Errorf("New with search_path %s created no %s there", schema, table+"_history")
		}
	}
}

func TestSchemaCreatedOncePerProcess(t *testing.T) {
	url := testURL(t)
	tr := &counter{}
	pool := newPool(t, url, tr, 0)
	table := uniqueTable(t, url)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			d, err := New(t.Context(), pool, &Options{Table: table})
			if err == nil {
				_, err = d.GetFile(t.Context(), "x")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, sql := tr.take()
	checks, ddl := 0, 0
	for _, q := range sql {
		if strings.Contains(q, "obj_description") {
			checks++
		}
		if strings.Contains(q, "pg_advisory_xact_lock") {
			ddl++
		}
	}
	if checks != 1 || ddl != 1 {
		t.Fatalf("%d concurrent first uses: %d schema checks and %d DDL runs, want 1 and 1", n, checks, ddl)
	}
}

func TestSchemaSafeWhenProcessesStartTogether(t *testing.T) {
	// Each pool plays a process of its own: createSchema bypasses the
	// per-process registry, so all of them race the DDL on the server.
	url := testURL(t)
	table := uniqueTable(t, url)
	const n = 6
	pools := make([]*counter, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		pools[i] = &counter{}
		pool := newPool(t, url, pools[i], 2)
		wg.Go(func() { errs <- createSchema(t.Context(), pool, newStatements(table), false) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent schema creation: %v", err)
		}
	}
	// Once the schema exists, a starting process only checks its version.
	tr := &counter{}
	if err := createSchema(t.Context(), newPool(t, url, tr, 1), newStatements(table), false); err != nil {
		t.Fatal(err)
	}
	if q, _, sql := tr.take(); q != 1 || strings.Contains(sql[0], "CREATE") {
		t.Fatalf("start over an existing schema ran %d statements: %q", q, sql)
	}
}

func TestScopeQueriesUseTheIndex(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	table := uniqueTable(t, url)
	d, err := New(t.Context(), pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	// 5,000 rows in 50 tenants, then statistics: the planner must pick the
	// primary key's range for one scope on its own.
	_, err = pool.Exec(t.Context(), `INSERT INTO `+quote(table)+` (path, content, version)
		SELECT 'tenant' || (i % 50) || '/main/f' || i || '.md', repeat('x', 200), 'v' || i FROM generate_series(1, 5000) AS i`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `ANALYZE `+quote(table)); err != nil {
		t.Fatal(err)
	}
	end, _ := driver.PrefixEnd("tenant7/main/")
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"ReadScope", d.sql.readScope, []any{"tenant7/main/", 101, 100, 404, end}},
		{"ListFiles", d.sql.listFiles, []any{"tenant7/main/", "", 100, end}},
	} {
		rows, err := pool.Query(t.Context(), "EXPLAIN "+q.sql, append([]any{pgx.QueryExecModeSimpleProtocol}, q.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "Index") || !strings.Contains(plan, table+"_pkey") || strings.Contains(plan, "Seq Scan") {
			t.Fatalf("%s does not range-scan the primary key:\n%s", q.name, plan)
		}
		t.Logf("%s plan:\n%s", q.name, plan)
	}
	got, err := d.ReadScope(t.Context(), driver.ScopeParams{Prefix: "tenant7/main/", Limit: 1000, MaxChars: 5})
	if err != nil || len(got) != 100 || got[0].Content != "xxxxx" || !got[0].Truncated {
		t.Fatalf("ReadScope = %d files (%+v), %v", len(got), got[:min(1, len(got))], err)
	}
}

func TestTwoProcessesRaceOneCAS(t *testing.T) {
	url := testURL(t)
	table := uniqueTable(t, url)
	for _, mode := range []string{"full", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			stores := make([]*store.Store, 2)
			for i := range stores {
				// Two pools, as two processes would have.
				var d driver.Driver
				d, err := openPool(t.Context(), url, &Options{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				if mode == "primitives" {
					d = contract.Primitives(d)
				}
				stores[i] = store.New(d, nil)
				t.Cleanup(func() { _ = stores[i].Close() })
			}
			path := "race/" + mode + ".md"
			v := ""
			for round := range 20 {
				start := make(chan struct{})
				type result struct {
					m   store.Mutation
					err error
				}
				results := make(chan result, 2)
				expected := v
				for i, s := range stores {
					go func() {
						<-start
						m, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: fmt.Sprint(round, i), Expected: expected,
							Operation: &store.Operation{ID: fmt.Sprint(mode, round, i), Fingerprint: "fp"}})
						results <- result{m, err}
					}()
				}
				close(start)
				won := 0
				for range stores {
					r := <-results
					switch {
					case r.err == nil:
						won++
						v = r.m.Version
					case !errors.Is(r.err, store.ErrConflict):
						t.Fatalf("round %d: %v", round, r.err)
					}
				}
				if won != 1 {
					t.Fatalf("round %d: %d winners", round, won)
				}
			}
		})
	}
}

func TestOneRoundTripPerIdempotentWrite(t *testing.T) {
	// With history on the entry rides in the same call of the mutation
	// function: the counts are the same.
	for _, history := range []bool{false, true} {
		t.Run(fmt.Sprintf("history=%v", history), func(t *testing.T) { oneRoundTripPerIdempotentWrite(t, history) })
	}
}

func oneRoundTripPerIdempotentWrite(t *testing.T, history bool) {
	url := testURL(t)
	tr := &counter{}
	// One connection, so that the statements prepared while warming up are
	// the ones the measured calls reuse.
	pool := newPool(t, url, tr, 1)
	d, err := New(t.Context(), pool, &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	opts := &store.Options{}
	if history {
		opts.History = &store.HistoryOptions{}
	}
	s := store.New(d, opts)
	ctx := t.Context()
	op := func(id string) *store.Operation { return &store.Operation{ID: id, Fingerprint: "fp"} }
	write := func(id, expected string) store.Mutation {
		m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- " + id, Expected: expected, Operation: op(id)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := write("warm-1", "")
	m = write("warm-2", m.Version)
	if _, err := s.ReadAndList(ctx, store.ReadAndListRequest{Path: "u/main/MEMORY.md", MaxChars: 100, Prefix: "u/main/", Limit: 10}); err != nil {
		t.Fatal(err)
	}
	tr.take()
	// A create checks that no file lies on its way or below it inside the
	// same call of the mutation function; the snapshot reads MEMORY.md and
	// the listing in one statement.
	for _, step := range []struct {
		name  string
		trips int
		do    func()
	}{
		{"write", 1, func() { m = write("w-1", m.Version) }},
		{"replay", 1, func() { write("w-1", "stale") }},
		{"delete", 1, func() {
			if _, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/MEMORY.md", Expected: m.Version, Operation: op("d-1")}); err != nil {
				t.Fatal(err)
			}
		}},
		{"create", 1, func() { m = write("c-1", "") }},
		{"snapshot", 1, func() {
			r, err := s.ReadAndList(ctx, store.ReadAndListRequest{Path: "u/main/MEMORY.md", MaxChars: 100, Prefix: "u/main/", Limit: 10})
			if err != nil || r.File == nil || r.File.Content != "- c-1" || len(r.Paths) != 1 {
				t.Fatalf("snapshot = %+v, %v", r, err)
			}
		}},
	} {
		step.do()
		q, p, sql := tr.take()
		if q+p != step.trips {
			t.Fatalf("%s: %d statements + %d prepares, want %d round trips: %q", step.name, q, p, step.trips, sql)
		}
	}
}

func TestCharacterCounting(t *testing.T) {
	url := testURL(t)
	d, err := New(t.Context(), newPool(t, url, nil, 0), &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	content := "héllo wörld 😀😀 日本語" // 18 runes, 32 bytes
	for _, p := range []string{"s/a.md", "s/é.md", "s/日/nested.md", "s0.md"} {
		if err := d.CreateFile(ctx, driver.File{Path: p, Content: content, Version: "v-" + p}); err != nil {
			t.Fatal(err)
		}
	}
	// Character bounds are the contract's scope_read_counts_runes; here,
	// what the store never sends: non-ASCII paths in a scope read.
	scoped, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "s/", Limit: 10, MaxChars: 14})
	if err != nil || len(scoped) != 2 || scoped[0].Path != "s/a.md" || scoped[1].Path != "s/é.md" || scoped[1].Content != "héllo wörld 😀😀" {
		t.Fatalf("ReadScope = %+v, %v", scoped, err)
	}
	// NUL, which PostgreSQL text cannot hold, round-trips through
	// content_bytes, and search reads cut it by characters too.
	nul := "a\x00é😀\x00b"
	if err := d.CreateFile(ctx, driver.File{Path: "z/nul.md", Content: nul, Version: "v"}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceFile(ctx, driver.File{Path: "z/nul.md", Content: nul + "c", Version: "v2"}, "v"); err != nil {
		t.Fatal(err)
	}
	if f, err := d.GetFile(ctx, "z/nul.md"); err != nil || f.Content != nul+"c" {
		t.Fatalf("GetFile(NUL) = %+v, %v", f, err)
	}
	for max, want := range map[int]string{1: "a", 3: "a\x00é", 7: nul + "c", 100: nul + "c"} {
		got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "z/", Limit: 1, MaxChars: max})
		if err != nil || len(got) != 1 || got[0].Content != want || got[0].Truncated != (max < 7) {
			t.Fatalf("ReadScope(NUL, %d) = %+v, %v", max, got, err)
		}
	}
	var shown string
	if err := d.pool.QueryRow(ctx, `SELECT content FROM `+quote(d.Table())+` WHERE path = 'z/nul.md'`).Scan(&shown); err != nil || shown != "a\uFFFDé😀\uFFFDbc" {
		t.Fatalf("content column = %q, %v", shown, err)
	}
	// A non-ASCII prefix bounds the range correctly too.
	got, err := d.ListFiles(ctx, driver.ListParams{Prefix: "s/é", Limit: 10})
	if err != nil || len(got) != 1 || got[0].Path != "s/é.md" {
		t.Fatalf("ListFiles(s/é) = %+v, %v", got, err)
	}
}

func TestTombstonesAndPruning(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	table := uniqueTable(t, url)
	d, err := New(t.Context(), pool, &Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Now()
	tomb := driver.File{Path: "t/gone.md", Version: "v1", OperationID: "op-del", Tombstone: true, ExpiresAt: now.Add(time.Hour)}
	if err := d.CreateFile(ctx, tomb); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "t/kept.md", Content: "x", Version: "v2", Metadata: map[string]string{"source": "test"}}); err != nil {
		t.Fatal(err)
	}
	f, err := d.GetFile(ctx, tomb.Path)
	if err != nil || f == nil || !f.Tombstone || f.OperationID != "op-del" || f.ExpiresAt.Sub(tomb.ExpiresAt).Abs() > time.Millisecond {
		t.Fatalf("GetFile(tombstone) = %+v, %v", f, err)
	}
	entries, err := d.ListFiles(ctx, driver.ListParams{Prefix: "t/", Limit: 10})
	if err != nil || len(entries) != 2 || !entries[0].Tombstone || entries[1].Tombstone {
		t.Fatalf("ListFiles = %+v, %v", entries, err)
	}
	if got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "t/", Limit: 10, MaxChars: 10}); err != nil || len(got) != 1 {
		t.Fatalf("ReadScope shows tombstones: %+v, %v", got, err)
	}
	// Metadata is JSONB an application can query.
	var source string
	if err := pool.QueryRow(ctx, `SELECT metadata->>'source' FROM `+quote(table)+` WHERE metadata @> '{"source":"test"}'`).Scan(&source); err != nil || source != "test" {
		t.Fatalf("metadata query = %q, %v", source, err)
	}
	for i, age := range []time.Duration{0, 2 * time.Hour} {
		r := driver.Receipt{ID: fmt.Sprint("r", i), Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/kept.md", Version: "v",
			CreatedAt: now.Add(-age), ExpiresAt: now.Add(-age + time.Hour)}
		if err := d.ReserveReceipt(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := d.PruneExpired(ctx, now); err != nil || n != 1 {
		t.Fatalf("PruneExpired(now) = %d, %v; want the old receipt", n, err)
	}
	if n, err := d.PruneExpired(ctx, now.Add(2*time.Hour)); err != nil || n != 2 {
		t.Fatalf("PruneExpired(+2h) = %d, %v; want the receipt and the tombstone", n, err)
	}
	if f, _ := d.GetFile(ctx, tomb.Path); f != nil {
		t.Fatal("expired tombstone kept")
	}
}

func TestContextErrorsPassThrough(t *testing.T) {
	url := testURL(t)
	d, err := New(t.Context(), newPool(t, url, nil, 0), &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.GetFile(ctx, "a.md"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetFile: %v", err)
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Version: "v"}); !errors.Is(err, context.Canceled) || errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("Mutate: %v", err)
	}
}

func TestEveryQueryExecMode(t *testing.T) {
	// Every parameter carries a cast, so the SQL works in every pgx exec
	// mode, including the simple protocol PgBouncer's transaction pooling
	// needs.
	url := testURL(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec, pgx.QueryExecModeDescribeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			d, err := New(t.Context(), pool, &Options{Table: uniqueTable(t, url)})
			if err != nil {
				t.Fatal(err)
			}
			s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
			ctx := t.Context()
			o := &store.Operation{ID: "op", Fingerprint: "fp"}
			content := "it's \"quoted\" \\ and NUL \x00 é"
			m, err := s.Write(ctx, store.WriteRequest{Path: "a/b.md", Content: content, Metadata: map[string]string{"k": "v'"}, Operation: o})
			if err != nil {
				t.Fatal(err)
			}
			if r, err := s.Write(ctx, store.WriteRequest{Path: "a/b.md", Content: content, Operation: o}); err != nil || !r.Replayed || r.Version != m.Version {
				t.Fatalf("replay = %+v, %v", r, err)
			}
			f, err := s.Read(ctx, "a/b.md", 100)
			if err != nil || f.Content != content || f.Metadata["k"] != "v'" || f.OperationID != "op" {
				t.Fatalf("read = %+v, %v", f, err)
			}
			res, err := s.Search(ctx, search.Request{Prefix: "a/", Query: "quoted", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100})
			if err != nil || len(res.Matches) != 1 {
				t.Fatalf("search = %+v, %v", res, err)
			}
			if _, err := s.Write(ctx, store.WriteRequest{Path: "a/b.md", Content: "x", Expected: "stale"}); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("stale write: %v", err)
			}
			if _, err := s.Append(ctx, store.AppendRequest{Path: "a/b.md", Text: "more", MaxChars: 100}); err != nil {
				t.Fatal(err)
			}
			h, err := s.History(ctx, store.HistoryRequest{Path: "a/b.md", Limit: 10})
			if err != nil || len(h.Entries) != 2 || h.Entries[1].Content != content || h.Entries[1].Metadata["k"] != "v'" {
				t.Fatalf("history = %+v, %v", h, err)
			}
			if v, err := s.ReadVersion(ctx, "a/b.md", m.Version); err != nil || v.Content != content {
				t.Fatalf("ReadVersion = %+v, %v", v, err)
			}
			if _, err := d.PruneExpired(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
			if n, err := s.ForgetHistory(ctx, "a/"); err != nil || n != 2 {
				t.Fatalf("ForgetHistory = %d, %v", n, err)
			}
			// The primitives' history statements too.
			ps := store.New(contract.Primitives(d), &store.Options{History: &store.HistoryOptions{}})
			if _, err := ps.Write(ctx, store.WriteRequest{Path: "a/c.md", Content: content}); err != nil {
				t.Fatal(err)
			}
			if h, err := ps.History(ctx, store.HistoryRequest{Prefix: "a/", Limit: 10}); err != nil || len(h.Entries) != 1 || h.Entries[0].Content != content {
				t.Fatalf("history over the primitives = %+v, %v", h, err)
			}
		})
	}
}

// A schema dropped while the process runs is created again by the next
// mutation instead of failing every write until a restart.
func TestSchemaDroppedWhileRunning(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 0)
	name := uniqueTable(t, url)
	d, err := New(t.Context(), pool, &Options{Table: name})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, nil)
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "a/b.md", Content: "x", Operation: &store.Operation{ID: "op1", Fingerprint: "fp"}}); err != nil {
		t.Fatal(err)
	}
	uniqueTableDrop(t, url, name)
	m, err := s.Write(t.Context(), store.WriteRequest{Path: "a/b.md", Content: "y", Operation: &store.Operation{ID: "op2", Fingerprint: "fp"}})
	if err != nil || m.Existed {
		t.Fatalf("write after the schema was dropped: %+v, %v", m, err)
	}
	// Only the files table dropped: the function (and its version) survive.
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), "DROP TABLE "+quote(name)); err != nil {
		t.Fatal(err)
	}
	if m, err = s.Write(t.Context(), store.WriteRequest{Path: "a/b.md", Content: "z", Operation: &store.Operation{ID: "op3", Fingerprint: "fp"}}); err != nil || m.Existed {
		t.Fatalf("write after the files table was dropped: %+v, %v", m, err)
	}
	// An append (the other function) retries the same way.
	uniqueTableDrop(t, url, name)
	if _, err := s.Append(t.Context(), store.AppendRequest{Path: "a/c.md", Text: "- w", MaxChars: 100, Operation: &store.Operation{ID: "op4", Fingerprint: "fp"}}); err != nil {
		t.Fatalf("append after the schema was dropped: %v", err)
	}
	if f, err := s.Read(t.Context(), "a/c.md", 100); err != nil || f.Content != "- w\n" {
		t.Fatalf("after the append: %+v, %v", f, err)
	}
}

// TestArgumentErrors checks that a nil pool and a bad URL are errors that
// say what to fix, with the package's prefix, before any connection.
func TestArgumentErrors(t *testing.T) {
	if _, err := New(t.Context(), nil, nil); err == nil || !strings.HasPrefix(err.Error(), "postgres: pass a *pgxpool.Pool to New") {
		t.Errorf("New(nil pool) = %v, want an error naming the pool", err)
	}
	for _, url := range []string{"postgres://u@host:notaport/db", "host=x port=y", "postgres://%zz"} {
		_, err := openPool(t.Context(), url, nil)
		var perr *pgconn.ParseConfigError
		if err == nil || !strings.HasPrefix(err.Error(), "postgres: fix the connection URL") || !errors.As(err, &perr) {
			t.Errorf("openPool(%q) = %v, want a postgres: error wrapping *pgconn.ParseConfigError", url, err)
		}
	}
}
