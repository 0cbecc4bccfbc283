package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/ncruces/go-sqlite3"
)

func openTest(t testing.TB, path string, opts *Options) *Driver {
	t.Helper()
	d, err := New(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestInvalidNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"agent-memory", "agent_memory; DROP TABLE users", "1memory", strings.Repeat("a", 53), `a"b`, "tablé", "main.x",
	} {
		if _, err := New(t.Context(), filepath.Join(dir, "x.db"), &Options{Table: name}); !errors.Is(err, ErrInvalidTable) {
			t.Errorf("New(table %q): %v, want ErrInvalidTable", name, err)
		}
	}
	for _, path := range []string{"", ":memory:"} {
		if _, err := New(t.Context(), path, nil); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("New(%q): %v, want ErrInvalidPath", path, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused Open created %v", entries)
	}
}

// TestSubMillisecondBusyTimeout checks that a positive busy timeout under
// a millisecond still waits: SQLite's busy_timeout counts whole
// milliseconds, and 0 turns its busy handler off.
func TestSubMillisecondBusyTimeout(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "x.db"), &Options{BusyTimeout: 500 * time.Microsecond})
	var ms int
	if err := d.DB().QueryRowContext(t.Context(), `PRAGMA busy_timeout`).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	if ms < 1 {
		t.Errorf("busy_timeout = %d ms for a BusyTimeout of 500µs, want at least 1 (0 never waits)", ms)
	}
}

func TestTablesShareAFile(t *testing.T) {
	// Names are quoted: a reserved word and mixed case work, and two
	// tables in one file are two separate stores.
	path := filepath.Join(t.TempDir(), "shared ?#%.db") // URI characters are escaped
	var versions []string
	for _, name := range []string{"select", "Mixed_Case"} {
		s := store.New(openTest(t, path, &Options{Table: name}), nil)
		m, err := s.Write(t.Context(), store.WriteRequest{Path: "a.md", Content: name, Operation: &store.Operation{ID: "op", Fingerprint: name}})
		if err != nil || m.Replayed {
			t.Fatalf("%s: %+v, %v", name, m, err)
		}
		versions = append(versions, m.Version)
	}
	for i, name := range []string{"select", "Mixed_Case"} {
		f, err := store.New(openTest(t, path, &Options{Table: name}), nil).Read(t.Context(), "a.md", 100)
		if err != nil || f.Content != name || f.Version != versions[i] {
			t.Fatalf("%s: %+v, %v", name, f, err)
		}
	}
}

func TestConcurrentOpenOfANewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			d, err := New(t.Context(), path, nil)
			if err == nil {
				_, err = d.GetFile(t.Context(), "x")
				_ = d.Close()
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
}

func TestTwoConnectionsRaceOneCAS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	for _, mode := range []string{"full", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			stores := make([]*store.Store, 2)
			for i := range stores {
				var d driver.Driver = openTest(t, path, nil) // its own *sql.DB
				if mode == "primitives" {
					d = contract.Primitives(d)
				}
				stores[i] = store.New(d, nil)
			}
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
						m, err := s.Write(t.Context(), store.WriteRequest{Path: mode + ".md", Content: fmt.Sprint(round, i), Expected: expected,
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

const (
	childEnv     = "AGENTMEM_SQLITE_CHILD" // database path: run as the second process
	childVersion = "AGENTMEM_SQLITE_CHILD_VERSION"
	childAppends = 40
)

// processRun is what each of the two processes does on the shared file:
// wait for the go signal, race one compare-and-swap on race.md, then
// append childAppends lines to log.md through CAS loops (half of them with
// an operation). It returns whether its CAS won.
func processRun(ctx context.Context, path, who, expected, goFile string) (bool, error) {
	d, err := New(ctx, path, nil)
	if err != nil {
		return false, err
	}
	s := store.New(d, nil)
	defer s.Close()
	if err := os.WriteFile(goFile+"."+who, nil, 0o644); err != nil { // ready
		return false, err
	}
	for {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, err = s.Write(ctx, store.WriteRequest{Path: "race.md", Content: who, Expected: expected})
	won := err == nil
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return false, err
	}
	for i := range childAppends {
		var op *store.Operation
		if i%2 == 0 {
			op = &store.Operation{ID: fmt.Sprint(who, i), Fingerprint: "fp"}
		}
		if _, err := contract.AppendOnce(ctx, s, "log.md", fmt.Sprint(who, "-", i), op, 1000); err != nil {
			return won, err
		}
		time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond) // let the other process in
	}
	return won, nil
}

func TestTwoProcessesOnOneFile(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		won, err := processRun(t.Context(), path, "child", os.Getenv(childVersion), path+".go")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("CHILD-CAS-WON=%v\n", won)
		return
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	seed := store.New(openTest(t, path, nil), nil)
	m, err := seed.Write(t.Context(), store.WriteRequest{Path: "race.md", Content: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestTwoProcessesOnOneFile$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childVersion+"="+m.Version)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	childOut := make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
		}
		childOut <- all.String()
	}()
	type result struct {
		won bool
		err error
	}
	parent := make(chan result, 1)
	go func() {
		won, err := processRun(t.Context(), path, "parent", m.Version, path+".go")
		parent <- result{won, err}
	}()
	// Both processes are open and waiting: let them go together.
	for _, who := range []string{"child", "parent"} {
		for {
			if _, err := os.Stat(path + ".go." + who); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := os.WriteFile(path+".go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := <-parent
	out := <-childOut
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	childWon := strings.Contains(out, "CHILD-CAS-WON=true")
	if !strings.Contains(out, "CHILD-CAS-WON=") || childWon == p.won {
		t.Fatalf("racing CAS across processes: parent won %v, child output:\n%s", p.won, out)
	}
	f, err := seed.Read(t.Context(), "log.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("line %q twice", l)
		}
		seen[l] = true
	}
	if len(lines) != 2*childAppends {
		t.Fatalf("%d lines after %d appends from each process: an update was lost", len(lines), childAppends)
	}
	switches := 0
	for i := 1; i < len(lines); i++ {
		if lines[i][0] != lines[i-1][0] {
			switches++
		}
	}
	t.Logf("parent won the CAS: %v; the log switches process %d times", p.won, switches)
}

// stmtCounter counts, on every connection it is installed on, the SQL
// statements SQLite runs (sqlite3_trace_v2 TRACE_STMT, prepared statements
// only: BEGIN and COMMIT run through sqlite3_exec and are not traced) and
// the transactions it commits (commit hook).
type stmtCounter struct {
	mu      sync.Mutex
	paused  bool
	stmts   int
	commits int
	sql     []string
}

func (c *stmtCounter) install(conn *sqlite3.Conn) error {
	conn.CommitHook(func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.paused {
			c.commits++
		}
		return true
	})
	return conn.Trace(sqlite3.TRACE_STMT, func(_ sqlite3.TraceEvent, _, sql any) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.paused {
			c.stmts++
			c.sql = append(c.sql, fmt.Sprint(sql))
		}
		return nil
	})
}

func (c *stmtCounter) pause(p bool) {
	c.mu.Lock()
	c.paused = p
	c.mu.Unlock()
}

func (c *stmtCounter) take() (stmts, commits int, sql []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stmts, commits, sql = c.stmts, c.commits, c.sql
	c.stmts, c.commits, c.sql = 0, 0, nil
	return stmts, commits, sql
}

func TestOneTransactionPerIdempotentWrite(t *testing.T) {
	c := &stmtCounter{}
	d, err := open(t.Context(), filepath.Join(t.TempDir(), "m.db"), nil, c.install)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, nil)
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
		// With the writer slot free, a replace or delete goes straight
		// to its transaction (no precheck): receipt and change.
		{"write", 2, 1, func() (err error) {
			m, err = s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- b", Expected: m.Version, Operation: op("w")})
			return err
		}},
		{"replay", 2, 0, func() error {
			_, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- b", Expected: "stale", Operation: op("w")})
			return err
		}},
		{"delete", 2, 1, func() error {
			_, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/MEMORY.md", Expected: m.Version, Operation: op("d")})
			return err
		}},
		// A create also checks that no file lies on its way or below it,
		// in the same transaction: one more statement.
		{"create", 3, 1, func() error {
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
}

// queryPlan returns SQLite's EXPLAIN QUERY PLAN of query, one step per line.
func queryPlan(t *testing.T, d *Driver, query string, args ...any) string {
	t.Helper()
	rows, err := d.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

func TestScopeQueriesUseTheIndex(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	end, _ := driver.PrefixEnd("t/main/")
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"ReadScope", d.sql.readScope, []any{"t/main/", 101, 100, end}},
		{"ListFiles", d.sql.listFiles, []any{"t/main/", "", 100, end}},
	} {
		text := queryPlan(t, d, q.sql, q.args...)
		if !strings.Contains(text, "SEARCH") || !strings.Contains(text, "(path>? AND path<?)") || strings.Contains(text, "TEMP B-TREE") {
			t.Fatalf("%s is not one ordered range search of the primary key:\n%s", q.name, text)
		}
		t.Logf("%s plan: %s", q.name, text)
	}
}

// TestPointQueriesUseTheIndex: the snapshot's statement and a create's
// file/folder check read by the primary key only (point reads and one
// range), never scanning the table.
func TestPointQueriesUseTheIndex(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	end, _ := driver.PrefixEnd("t/main/")
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"ReadSnapshot", d.sql.snapshot, []any{"t/main/", "", 100, "t/main/MEMORY.md", end}},
		{"collision", d.sql.collision, []any{`["t","t/main"]`, "t/main/x.md/", "t/main/x.md0"}},
	} {
		text := queryPlan(t, d, q.sql, q.args...)
		if strings.Contains(text, "SCAN agent_memory") || strings.Contains(text, "TEMP B-TREE") ||
			!strings.Contains(text, "(path>? AND path<?)") {
			t.Fatalf("%s reads more than keys and one range of the primary key:\n%s", q.name, text)
		}
		t.Logf("%s plan: %s", q.name, text)
	}
}

func TestCharacterCounting(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
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
	got, err := d.ListFiles(ctx, driver.ListParams{Prefix: "s/é", Limit: 10})
	if err != nil || len(got) != 1 || got[0].Path != "s/é.md" {
		t.Fatalf("ListFiles(s/é) = %+v, %v", got, err)
	}
	// A NUL inside content neither ends the text nor confuses truncation
	// (SQLite's substr() stops at it; the driver reads such a file again).
	if err := d.CreateFile(ctx, driver.File{Path: "z/nul.md", Content: "a\x00bc", Version: "v"}); err != nil {
		t.Fatal(err)
	}
	for max, want := range map[int]string{2: "a\x00", 4: "a\x00bc", 9: "a\x00bc"} {
		got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "z/", Limit: 1, MaxChars: max})
		if err != nil || len(got) != 1 || got[0].Content != want || got[0].Truncated != (max < 4) {
			t.Fatalf("ReadScope(NUL, %d) = %+v, %v", max, got, err)
		}
	}
	if f, err := d.GetFile(ctx, "z/nul.md"); err != nil || f.Content != "a\x00bc" {
		t.Fatalf("GetFile(NUL) = %+v, %v", f, err)
	}
}

func TestTombstonesAndPruning(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
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
	// Metadata is JSON text an application can query.
	var source string
	if err := d.DB().QueryRowContext(ctx, `SELECT json_extract(metadata, '$.source') FROM "agent_memory" WHERE path = 't/kept.md'`).Scan(&source); err != nil || source != "test" {
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
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.GetFile(ctx, "a.md"); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetFile: %v", err)
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "a.md", Version: "v"}); !errors.Is(err, context.Canceled) || errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("Mutate: %v", err)
	}
	// The listings, read through the engine's own API.
	lp := driver.ListParams{Prefix: "a", Limit: 10}
	if _, err := d.ListFiles(ctx, lp); !errors.Is(err, context.Canceled) {
		t.Fatalf("ListFiles: %v", err)
	}
	if _, _, err := d.ReadSnapshot(ctx, driver.SnapshotParams{Path: "a.md", List: lp}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	if _, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "a", MaxChars: 10, Limit: 10}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadScope: %v", err)
	}
}

func TestTooLargeIsRefused(t *testing.T) {
	// A connection limit stands in for SQLite's 1 GB default.
	limit := func(c *sqlite3.Conn) error { c.Limit(sqlite3.LIMIT_LENGTH, 1000); return nil }
	d, err := open(t.Context(), filepath.Join(t.TempDir(), "m.db"), nil, limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	for _, mode := range []string{"full", "primitives"} {
		var dd driver.Driver = d
		if mode == "primitives" {
			dd = contract.Primitives(d)
		}
		s := store.New(dd, nil)
		for _, op := range []*store.Operation{nil, {ID: "op-" + mode, Fingerprint: "fp"}} {
			_, err := s.Write(t.Context(), store.WriteRequest{Path: "big.md", Content: strings.Repeat("x", 2000), Operation: op})
			if !errors.Is(err, store.ErrTooLarge) {
				t.Fatalf("%s: oversized write: %v", mode, err)
			}
			if op != nil {
				if g, err := s.GetOperation(t.Context(), *op); err != nil || g != nil {
					t.Fatalf("%s: refused write left a receipt: %+v, %v", mode, g, err)
				}
			}
		}
		if _, err := s.Read(t.Context(), "big.md", 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: refused write landed: %v", mode, err)
		}
	}
}

// TestMissingDirectory checks that Open in a directory that does not exist
// says so first, naming the file, and wraps fs.ErrNotExist.
func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	name := filepath.Join(dir, "memory.db")
	_, err := New(t.Context(), name, nil)
	want := fmt.Sprintf("sqlite: cannot open the database file %s: directory %s does not exist", name, dir)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open in a missing directory: %v, want %q… wrapping fs.ErrNotExist", err, want)
	}
}
