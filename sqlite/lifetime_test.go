package sqlite

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// oldFilesDDL is the files table as drivers before the lifetime columns
// made it.
const oldFilesDDL = `CREATE TABLE "agent_memory" (
	path         TEXT PRIMARY KEY NOT NULL,
	content      TEXT NOT NULL,
	version      TEXT NOT NULL,
	operation_id TEXT,
	metadata     TEXT,
	tombstone    INTEGER NOT NULL DEFAULT 0,
	expires_at   INTEGER
) STRICT`

// TestLifetimeColumnsAddedOnOpen: a files table made before the lifetime
// columns existed gets them when it is next opened, filled from each
// row's metadata, so its listings, scope reads and snapshots report the
// lifetimes the earlier version read from the metadata, and the store
// hides the expired file; a second open changes nothing.
func TestLifetimeColumnsAddedOnOpen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	rows := []struct{ path, metadata string }{
		{"u/main/a.md", `{"agentmem:expires":"2020-01-01T00:00:00.000Z","updated_by":"x"}`}, // expired
		{"u/main/b.md", `{"agentmem:pinned":"true"}`},
		{"u/main/c.md", `{"agentmem.expires":"2020-01-01T00:00:00.000Z"}`}, // a key the store does not own
		{"u/main/d.md", ``}, // NULL
		{"u/main/e.md", `{"agentmem:expires":"2099-01-01T00:00:00.000Z","agentmem:pinned":"true"}`},
		{"u/main/f.md", `{"agentmem:expires":"2099-01-01T00:00:00.000\u005a"}`}, // escaped: decoded
	}
	old, err := sqlitedriver.Open("file:" + filepath.ToSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, oldFilesDDL); err != nil {
		t.Fatal(err)
	}
	want := map[string]driver.Lifetime{}
	for _, r := range rows {
		if _, err := old.ExecContext(ctx, `INSERT INTO "agent_memory" (path, content, version, metadata) VALUES (?, 'x', 'v', nullif(?, ''))`,
			r.path, r.metadata); err != nil {
			t.Fatal(err)
		}
		// What the earlier version listed, reading the metadata.
		if want[r.path], err = driver.LifetimeOfJSON(r.metadata); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if want["u/main/f.md"].Expires != "2099-01-01T00:00:00.000Z" || want["u/main/b.md"].Pinned != "true" {
		t.Fatalf("lifetimes read from the metadata: %+v", want)
	}

	check := func(d *Driver) {
		t.Helper()
		lp := driver.ListParams{Prefix: "u/main/", Limit: 100}
		entries, err := d.ListFiles(ctx, lp)
		if err != nil {
			t.Fatal(err)
		}
		_, snap, err := d.ReadSnapshot(ctx, driver.SnapshotParams{Path: "u/main/a.md", List: lp})
		if err != nil {
			t.Fatal(err)
		}
		scope, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "u/main/", MaxChars: 100, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]map[string]driver.Lifetime{"ListFiles": lifetimes(entries), "ReadSnapshot": lifetimes(snap), "ReadScope": scopeLifetimes(scope)} {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s lifetimes = %+v, want %+v", name, got, want)
			}
		}
		paths, err := store.New(d, nil).ListPaths(ctx, "u/main/", 100)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(paths, "u/main/a.md") || !slices.Contains(paths, "u/main/b.md") || len(paths) != len(rows)-1 {
			t.Errorf("store.ListPaths = %v, want every file but the expired u/main/a.md", paths)
		}
		f, err := d.GetFile(ctx, "u/main/e.md")
		if err != nil || f == nil || driver.LifetimeOf(f.Metadata) != want["u/main/e.md"] {
			t.Errorf("GetFile(e.md) = %+v, %v; want its metadata kept", f, err)
		}
	}
	d := openTest(t, path, nil)
	check(d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openTest(t, path, &Options{NoCreate: true})
	check(d)
	var cols int
	if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('agent_memory') WHERE name LIKE 'life_%'`).Scan(&cols); err != nil || cols != 2 {
		t.Errorf("lifetime columns after two opens: %d, %v", cols, err)
	}
}

// TestLifetimeColumnsFollowMetadata: every statement that writes a row's
// metadata writes its lifetime columns with it: after each write, append,
// delete and restore, through the driver's own paths and through the
// primitives (tombstones), every row's columns hold what its metadata
// holds.
func TestLifetimeColumnsFollowMetadata(t *testing.T) {
	for _, mode := range []string{"full", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			s := store.New(dd, &store.Options{History: &store.HistoryOptions{}})
			t.Cleanup(func() { _ = s.Close() })
			check := func(step string) {
				t.Helper()
				rows, err := d.DB().QueryContext(ctx, `SELECT path, metadata, life_expires, life_pinned FROM "agent_memory"`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				n := 0
				for rows.Next() {
					var path string
					var md sql.NullString
					var got driver.Lifetime
					if err := rows.Scan(&path, &md, &got.Expires, &got.Pinned); err != nil {
						t.Fatal(err)
					}
					want, err := driver.LifetimeOfJSON(md.String)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("after %s: %s has the lifetime columns %+v, its metadata %+v", step, path, got, want)
					}
					n++
				}
				if err := rows.Err(); err != nil || n == 0 {
					t.Fatalf("after %s: %d rows, %v", step, n, err)
				}
			}
			write := func(r store.WriteRequest) string {
				t.Helper()
				m, err := s.Write(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				return m.Version
			}
			at := time.Now().Add(time.Hour)
			write(store.WriteRequest{Path: "u/main/a.md", Content: "- a\n", ExpiresAt: at})
			b := write(store.WriteRequest{Path: "u/main/b.md", Content: "- b\n", Pinned: true, Metadata: map[string]string{"k": "v"}})
			write(store.WriteRequest{Path: "u/main/c.md", Content: "- c\n"})
			check("creates")
			if _, err := s.Append(ctx, store.AppendRequest{Path: "u/main/a.md", Text: "- a2", MaxChars: 1000}); err != nil {
				t.Fatal(err)
			}
			check("an append (the expiry kept)")
			b2 := write(store.WriteRequest{Path: "u/main/b.md", Content: "- b2\n", Expected: b})
			check("a rewrite without the pin")
			if _, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/b.md", Expected: b2}); err != nil {
				t.Fatal(err)
			}
			check("a delete")
			if _, err := s.Restore(ctx, store.RestoreRequest{Path: "u/main/b.md", Version: b}); err != nil {
				t.Fatal(err)
			}
			check("a restore")
			f, err := s.Read(ctx, "u/main/a.md", 100)
			if err != nil {
				t.Fatal(err)
			}
			write(store.WriteRequest{Path: "u/main/a.md", Content: "- a3\n", Expected: f.Version, Pinned: true})
			check("a rewrite from an expiry to a pin")
		})
	}
}

func lifetimes(entries []driver.Entry) map[string]driver.Lifetime {
	out := map[string]driver.Lifetime{}
	for _, e := range entries {
		out[e.Path] = e.Lifetime
	}
	return out
}

func scopeLifetimes(files []driver.ScopeFile) map[string]driver.Lifetime {
	out := map[string]driver.Lifetime{}
	for _, f := range files {
		out[f.Path] = f.Lifetime
	}
	return out
}
