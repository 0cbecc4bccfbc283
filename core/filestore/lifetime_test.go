package filestore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

const soon = "2030-01-01T00:00:00.000Z"

var (
	expiring = map[string]string{driver.ExpiresKey: soon}
	pinned   = map[string]string{driver.PinnedKey: "true"}
)

// listedLifetimes lists prefix and returns each path's lifetime, from
// ListFiles and from ReadScope with contents cut (which takes a cut file's
// lifetime from the index too), failing t when the two disagree.
func listedLifetimes(t *testing.T, d *Driver, prefix string) map[string]driver.Lifetime {
	t.Helper()
	entries, err := d.ListFiles(t.Context(), driver.ListParams{Prefix: prefix, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]driver.Lifetime{}
	for _, e := range entries {
		out[e.Path] = e.Lifetime
	}
	files, err := d.ReadScope(t.Context(), driver.ScopeParams{Prefix: prefix, Limit: 100, MaxChars: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !f.Truncated {
			continue
		}
		if l, ok := out[f.Path]; !ok || l != f.Lifetime {
			t.Fatalf("ReadScope: %s has lifetime %+v, ListFiles %+v", f.Path, f.Lifetime, l)
		}
	}
	return out
}

// wantLifetime checks the listed lifetime of path against GetFile's and
// against want.
func wantLifetime(t *testing.T, d *Driver, path string, want driver.Lifetime) {
	t.Helper()
	dir, _ := splitDir(path)
	got := listedLifetimes(t, d, dir+"/")[path]
	f, err := d.GetFile(t.Context(), path)
	if err != nil || f == nil {
		t.Fatalf("GetFile(%s) = %+v, %v", path, f, err)
	}
	if read := driver.LifetimeOf(f.Metadata); read != got {
		t.Fatalf("%s: listed lifetime %+v, GetFile's %+v", path, got, read)
	}
	if got != want {
		t.Fatalf("%s: listed lifetime %+v, want %+v", path, got, want)
	}
}

// TestLifetimeIndexFollowsWrites: a folder's index holds the files whose
// record keeps a lifetime, and goes (with its folders) when none does.
func TestLifetimeIndexFollowsWrites(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.CreateFile(ctx, driver.File{Path: "u/a/x.md", Content: "expiring", Version: "v1", Metadata: expiring}))
	must(d.CreateFile(ctx, driver.File{Path: "u/a/y.md", Content: "pinned", Version: "v1", Metadata: pinned}))
	must(d.CreateFile(ctx, driver.File{Path: "u/a/z.md", Content: "plain", Version: "v1"}))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{Expires: soon})
	wantLifetime(t, d, "u/a/y.md", driver.Lifetime{Pinned: "true"})
	wantLifetime(t, d, "u/a/z.md", driver.Lifetime{})
	ix, err := d.loadLifetimes("u/a")
	must(err)
	if len(ix.entries) != 2 {
		t.Fatalf("index = %+v, want x.md and y.md", ix.entries)
	}
	// A write without a lifetime keeps the entry while the record's
	// previous state has one; the next one drops it.
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/x.md", Content: "plain now", Version: "v2"}, "v1"))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{})
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/x.md", Content: "plain again", Version: "v3"}, "v2"))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{})
	// A tombstone over a pinned file keeps an entry (without a
	// fingerprint); a delete drops it.
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/y.md", Version: "v2", Tombstone: true}, "v1"))
	if ix, _ := d.loadLifetimes("u/a"); len(ix.entries) != 1 || ix.entries["y.md"].Size != -1 {
		t.Fatalf("index after the tombstone = %+v", ix.entries)
	}
	must(d.CreateFile(ctx, driver.File{Path: "u/b.md", Content: "b", Version: "v1", Metadata: expiring}))
	must(d.DeleteFile(ctx, "u/b.md", "v1"))
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/y.md", Content: "back", Version: "v3"}, "v2"))
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/y.md", Content: "back again", Version: "v4"}, "v3"))
	if left, err := os.ReadDir(d.lifetimesRoot()); err != nil || len(left) != 0 {
		t.Fatalf("the index outlived every lifetime: %v, %v", left, err)
	}
}

// TestLifetimeIndexCrashBeforeRename: a crash after the index and the
// record, before the content is renamed into place, lists the lifetime of
// the row GetFile reads (the previous one), either way round.
func TestLifetimeIndexCrashBeforeRename(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, next map[string]string
		want      driver.Lifetime
	}{
		{"expiry not landed", nil, expiring, driver.Lifetime{}},
		{"expiry cleared, not landed", expiring, nil, driver.Lifetime{Expires: soon}},
		{"pin to expiry, not landed", pinned, expiring, driver.Lifetime{Pinned: "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openDriver(t)
			old := driver.File{Path: "u/f.md", Content: "old", Version: "v1", Metadata: tc.old}
			if err := d.CreateFile(t.Context(), old); err != nil {
				t.Fatal(err)
			}
			// store's steps for the replace, but the rename: the process
			// dies with the new content staged.
			next := driver.File{Path: "u/f.md", Content: "new", Version: "v2", Metadata: tc.next}
			real, _ := d.target(next.Path)
			tmp, staged, err := stage(real, []byte(next.Content))
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(tmp)
			if err := d.noteLifetime(next.Path, driver.LifetimeOf(next.Metadata), driver.LifetimeOf(old.Metadata), staged); err != nil {
				t.Fatal(err)
			}
			rec := record{Version: "v2", Hash: hashOf([]byte("new")), Metadata: tc.next,
				Prev: &record{Version: "v1", Hash: hashOf([]byte("old")), Metadata: tc.old}}
			if err := writeJSON(d.recordPath(next.Path), rec); err != nil {
				t.Fatal(err)
			}
			wantLifetime(t, d, "u/f.md", tc.want)
			// The next change settles it.
			if err := d.ReplaceFile(t.Context(), driver.File{Path: "u/f.md", Content: "later", Version: "v3", Metadata: pinned}, "v1"); err != nil {
				t.Fatal(err)
			}
			wantLifetime(t, d, "u/f.md", driver.Lifetime{Pinned: "true"})
		})
	}
}

// TestLifetimeIndexHandEdits: a file changed by hand (version "ext-…",
// no metadata) lists no lifetime, even an edit in place that keeps its
// size and modification time; restoring the exact bytes by hand brings
// the record's row back, lifetime included, and so does restoring the
// previous state's bytes.
func TestLifetimeIndexHandEdits(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(d.Root(), "u", "x.md")
	must(d.CreateFile(ctx, driver.File{Path: "u/x.md", Content: "original", Version: "v1", Metadata: expiring}))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	must(os.WriteFile(name, []byte("edited!!"), 0o644)) // same size, a later time
	wantLifetime(t, d, "u/x.md", driver.Lifetime{})
	must(os.WriteFile(name, []byte("original"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})

	// An edit in place within the clock tick of the write: same size,
	// same time, same inode. The index file of that tick leaves it
	// checked at every listing; a later write of the folder's index reads
	// it and clears its fingerprint.
	ix, err := d.loadLifetimes("u")
	must(err)
	e := ix.entries["x.md"]
	mtime := time.Unix(0, e.MTime)
	must(os.Chtimes(d.lifetimesPath("u"), mtime, mtime)) // the index file of the same tick
	must(os.WriteFile(name, []byte("edited!!"), 0o644))
	must(os.Chtimes(name, mtime, mtime))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{})
	time.Sleep(20 * time.Millisecond) // a later tick
	must(d.CreateFile(ctx, driver.File{Path: "u/y.md", Content: "y", Version: "v1", Metadata: pinned}))
	if ix, _ := d.loadLifetimes("u"); ix.entries["x.md"].Size != -1 || ix.mtime <= e.MTime {
		t.Fatalf("the later index write kept the fingerprint of a file changed in place: %+v", ix)
	}
	wantLifetime(t, d, "u/x.md", driver.Lifetime{})
	must(os.WriteFile(name, []byte("original"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})

	// The record's previous state: a write that clears the expiry, then
	// the old bytes put back by hand.
	must(d.ReplaceFile(ctx, driver.File{Path: "u/x.md", Content: "rewritten", Version: "v2"}, "v1"))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{})
	must(os.WriteFile(name, []byte("original"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})

	// A hand-made file where none was recorded has none; one removed by
	// hand is not listed.
	must(os.WriteFile(filepath.Join(d.Root(), "u", "z.md"), []byte("hand made"), 0o644))
	wantLifetime(t, d, "u/z.md", driver.Lifetime{})
	must(os.Remove(filepath.Join(d.Root(), "u", "y.md")))
	if _, ok := listedLifetimes(t, d, "u/")["u/y.md"]; ok {
		t.Fatal("a file removed by hand is listed")
	}
}

// TestAppendKeepsLifetime: an append keeps the row's lifetime, in the row
// and in its history entry, and counts an expired row as missing.
func TestAppendKeepsLifetime(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	if err := d.CreateFile(ctx, driver.File{Path: "u/x.md", Content: "- one\n", Version: "v1", Metadata: expiring}); err != nil {
		t.Fatal(err)
	}
	h := entry("u/x.md", version(2), time.Time{})
	res, err := d.Append(ctx, driver.AppendParams{Path: "u/x.md", Entry: "- two", MaxChars: 100, Version: version(2),
		Metadata: map[string]string{"by": "job", driver.PinnedKey: "true"}, History: &h, Now: "2029-01-01T00:00:00.000Z"})
	if err != nil || res.Missing {
		t.Fatalf("append = %+v, %v", res, err)
	}
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	f, _ := d.GetFile(ctx, "u/x.md")
	if f.Metadata["by"] != "job" || len(f.Metadata) != 2 {
		t.Fatalf("appended metadata = %v", f.Metadata)
	}
	got, err := d.GetHistory(ctx, "u/x.md", version(2))
	if err != nil || got == nil || got.Metadata[driver.ExpiresKey] != soon || got.Metadata[driver.PinnedKey] != "" {
		t.Fatalf("history entry = %+v, %v", got, err)
	}
	res, err = d.Append(ctx, driver.AppendParams{Path: "u/x.md", Entry: "- three", MaxChars: 100, Version: version(3), Now: soon})
	if err != nil || !res.Missing {
		t.Fatalf("append to an expired row = %+v, %v; want Missing", res, err)
	}
}

// TestLifetimeIndexCorrupt: a corrupt index is read around (each file of
// its folder read as GetFile reads it) and rebuilt from the records by the
// next write in its folder.
func TestLifetimeIndexCorrupt(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.CreateFile(ctx, driver.File{Path: "u/x.md", Content: "x", Version: "v1", Metadata: expiring}))
	must(d.CreateFile(ctx, driver.File{Path: "u/y.md", Content: "y", Version: "v1", Metadata: pinned}))
	must(d.CreateFile(ctx, driver.File{Path: "u/z.md", Content: "z", Version: "v1"}))
	must(os.WriteFile(d.lifetimesPath("u"), []byte("{not an index"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	wantLifetime(t, d, "u/y.md", driver.Lifetime{Pinned: "true"})
	wantLifetime(t, d, "u/z.md", driver.Lifetime{})
	must(d.ReplaceFile(ctx, driver.File{Path: "u/z.md", Content: "z2", Version: "v2"}, "v1"))
	ix, err := d.loadLifetimes("u")
	must(err)
	if ix.corrupt || len(ix.entries) != 2 || ix.entries["x.md"].Expires != soon || ix.entries["y.md"].Pinned != "true" {
		t.Fatalf("rebuilt index = %+v", ix)
	}
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	wantLifetime(t, d, "u/y.md", driver.Lifetime{Pinned: "true"})
	wantLifetime(t, d, "u/z.md", driver.Lifetime{})
}

// TestLifetimeIndexFormat: names and values that need quoting survive the
// index's text.
func TestLifetimeIndexFormat(t *testing.T) {
	in := map[string]lifeEntry{
		"a.md":        {Expires: soon, Size: 3, MTime: 1_700_000_000_123_456_789, Ino: 42},
		"tab\there":   {Pinned: "true", Size: -1},
		`"quoted".md`: {Expires: "odd\nvalue\\", Size: 0},
	}
	out, err := parseLifetimes(string(formatLifetimes(in)))
	if err != nil || len(out) != len(in) {
		t.Fatalf("parse = %+v, %v", out, err)
	}
	for k, v := range in {
		if out[k] != v {
			t.Errorf("%q: %+v, want %+v", k, out[k], v)
		}
	}
	for _, bad := range []string{"", "agentmem-lifetimes 1\na.md\t\t\t1\t2\n", "agentmem-lifetimes 1\na.md\t\t\t1\t2\t3\t4\n", "agentmem-lifetimes 1\na.md\t\t\tx\t2\t3\n"} {
		if _, err := parseLifetimes(bad); err == nil {
			t.Errorf("parse(%q) took it", bad)
		}
	}
}
