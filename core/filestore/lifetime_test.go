package filestore

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
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
// ListFiles and from ReadScope, with contents cut (which takes a cut
// file's lifetime from the index too) and whole (from the record, as
// GetFile), failing t when they disagree.
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
	for _, maxChars := range []int{1, 1000} {
		files, err := d.ReadScope(t.Context(), driver.ScopeParams{Prefix: prefix, Limit: 100, MaxChars: maxChars})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Truncated != (maxChars == 1) {
				continue
			}
			if l, ok := out[f.Path]; !ok || l != f.Lifetime {
				t.Fatalf("ReadScope (MaxChars %d): %s has lifetime %+v, ListFiles %+v", maxChars, f.Path, f.Lifetime, l)
			}
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

// fatalOn returns a check that fails t on an error.
func fatalOn(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// indexOf returns the entries of folder dir's lifetime index, failing t
// when it is unreadable or corrupt.
func indexOf(t *testing.T, d *Driver, dir string) map[string]lifeEntry {
	t.Helper()
	ix, err := d.loadLifetimes(dir)
	if err != nil || ix.corrupt {
		t.Fatalf("index of %q: %+v, %v", dir, ix, err)
	}
	return ix.entries
}

// TestLifetimeIndexFollowsWrites: a folder's index holds the files whose
// record has a lifetime, settled once each write is done, and goes (with
// its folders) when none does; a write that keeps a file's lifetime
// writes no index.
func TestLifetimeIndexFollowsWrites(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	must := fatalOn(t)
	must(d.CreateFile(ctx, driver.File{Path: "u/a/x.md", Content: "expiring", Version: "v1", Metadata: expiring}))
	must(d.CreateFile(ctx, driver.File{Path: "u/a/y.md", Content: "pinned", Version: "v1", Metadata: pinned}))
	must(d.CreateFile(ctx, driver.File{Path: "u/a/z.md", Content: "plain", Version: "v1"}))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{Expires: soon})
	wantLifetime(t, d, "u/a/y.md", driver.Lifetime{Pinned: "true"})
	wantLifetime(t, d, "u/a/z.md", driver.Lifetime{})
	want := map[string]lifeEntry{"x.md": {Expires: soon}, "y.md": {Pinned: "true"}}
	if got := indexOf(t, d, "u/a"); !maps.Equal(got, want) {
		t.Fatalf("index = %+v, want %+v", got, want)
	}
	// A write that keeps the lifetime leaves the index file as it was.
	before, err := os.Stat(d.lifetimesPath("u/a"))
	must(err)
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/x.md", Content: "still expiring", Version: "v2", Metadata: expiring}, "v1"))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{Expires: soon})
	if after, err := os.Stat(d.lifetimesPath("u/a")); err != nil || !os.SameFile(before, after) {
		t.Fatalf("a write that kept the lifetime rewrote the index: %v", err)
	}
	// A write without a lifetime drops the entry.
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/x.md", Content: "plain now", Version: "v3"}, "v2"))
	wantLifetime(t, d, "u/a/x.md", driver.Lifetime{})
	if got := indexOf(t, d, "u/a"); len(got) != 1 || got["y.md"] != (lifeEntry{Pinned: "true"}) {
		t.Fatalf("index after clearing x.md = %+v", got)
	}
	// A tombstone has no lifetime, and a delete drops the entry too.
	must(d.CreateFile(ctx, driver.File{Path: "u/b.md", Content: "b", Version: "v1", Metadata: expiring}))
	if got := indexOf(t, d, "u"); got["b.md"] != (lifeEntry{Expires: soon}) {
		t.Fatalf("index of u = %+v", got)
	}
	must(d.DeleteFile(ctx, "u/b.md", "v1"))
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/y.md", Version: "v2", Tombstone: true}, "v1"))
	if left, err := os.ReadDir(d.lifetimesRoot()); err != nil || len(left) != 0 {
		t.Fatalf("the index outlived every lifetime: %v, %v", left, err)
	}
	must(d.ReplaceFile(ctx, driver.File{Path: "u/a/y.md", Content: "back", Version: "v3", Metadata: pinned}, "v2"))
	wantLifetime(t, d, "u/a/y.md", driver.Lifetime{Pinned: "true"})
}

// TestLifetimeIndexCrash: a write that dies at any step after marking its
// entry pending lists the lifetime GetFile reads: the old one before the
// content is in place (the record's previous state, "not landed"), the
// new one after. A later write in the folder settles the entry by reading
// the file, but for content still the previous state's, which stays
// pending (read at each listing) until the file's own next write.
func TestLifetimeIndexCrash(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, next map[string]string
	}{
		{"expiry set", nil, expiring},
		{"expiry cleared", expiring, nil},
		{"pin to expiry", pinned, expiring},
		{"expiry kept", expiring, expiring}, // no pending mark: every step reads as that expiry
	} {
		for _, step := range []string{"marked", "recorded", "renamed"} {
			t.Run(tc.name+"/"+step, func(t *testing.T) {
				d := openDriver(t)
				ctx := t.Context()
				must := fatalOn(t)
				oldL, nextL := driver.LifetimeOf(tc.old), driver.LifetimeOf(tc.next)
				must(d.CreateFile(ctx, driver.File{Path: "u/f.md", Content: "old", Version: "v1", Metadata: tc.old}))
				d.crashAfter = step
				must(d.ReplaceFile(ctx, driver.File{Path: "u/f.md", Content: "new", Version: "v2", Metadata: tc.next}, "v1"))
				d.crashAfter = ""
				landed := step == "renamed"
				want, version := oldL, "v1"
				if landed {
					want, version = nextL, "v2"
				}
				wantLifetime(t, d, "u/f.md", want)
				if f, err := d.GetFile(ctx, "u/f.md"); err != nil || f.Version != version {
					t.Fatalf("GetFile = %+v, %v; want version %s", f, err, version)
				}
				if oldL != nextL {
					if e := indexOf(t, d, "u")["f.md"]; !e.Pending {
						t.Fatalf("entry after the crash = %+v, want pending", e)
					}
				}
				// Another write in the folder settles the entry, unless
				// the content is still the previous state's.
				must(d.CreateFile(ctx, driver.File{Path: "u/g.md", Content: "g", Version: "v1", Metadata: pinned}))
				e, named := indexOf(t, d, "u")["f.md"]
				switch {
				case step == "recorded" && oldL != nextL:
					if !e.Pending {
						t.Fatalf("entry of a write that did not land = %+v, want still pending", e)
					}
				case want == (driver.Lifetime{}):
					if named {
						t.Fatalf("entry = %+v, want none", e)
					}
				case e != (lifeEntry{Expires: want.Expires, Pinned: want.Pinned}):
					t.Fatalf("entry = %+v, want settled %+v", e, want)
				}
				wantLifetime(t, d, "u/f.md", want)
				// The file's next write settles it.
				must(d.ReplaceFile(ctx, driver.File{Path: "u/f.md", Content: "later", Version: "v3", Metadata: pinned}, version))
				wantLifetime(t, d, "u/f.md", driver.Lifetime{Pinned: "true"})
				if got := indexOf(t, d, "u"); got["f.md"] != (lifeEntry{Pinned: "true"}) {
					t.Fatalf("index after the next write = %+v", got)
				}
			})
		}
	}
}

// TestLifetimeIndexCrashDelete: a delete that dies after marking its
// entry pending lists what GetFile reads, and a file made by hand at its
// path afterwards has no lifetime.
func TestLifetimeIndexCrashDelete(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	if err := d.CreateFile(ctx, driver.File{Path: "u/f.md", Content: "old", Version: "v1", Metadata: expiring}); err != nil {
		t.Fatal(err)
	}
	// The delete's steps, but the last: the content and the record gone,
	// the entry still pending.
	settle, err := d.markLifetime("u/f.md", driver.Lifetime{})
	if err != nil || settle == nil {
		t.Fatal(err)
	}
	real, _ := d.target("u/f.md")
	if err := d.removeFile(real); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d.recordPath("u/f.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("hand made"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLifetime(t, d, "u/f.md", driver.Lifetime{})
}

// TestLifetimeIndexHandEdits: a file changed by hand (version "ext-…")
// keeps its record's expiry and pin, in GetFile and in listings, as its
// only metadata; restoring the exact bytes by hand brings the record's
// row back; putting back the previous state's bytes brings that state's
// version with the record's lifetime.
func TestLifetimeIndexHandEdits(t *testing.T) {
	d := openDriver(t)
	ctx := t.Context()
	must := fatalOn(t)
	name := filepath.Join(d.Root(), "u", "x.md")
	must(d.CreateFile(ctx, driver.File{Path: "u/x.md", Content: "original", Version: "v1", Metadata: map[string]string{"by": "me", driver.ExpiresKey: soon}}))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	must(os.WriteFile(name, []byte("edited!!"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	f, err := d.GetFile(ctx, "u/x.md")
	must(err)
	if !strings.HasPrefix(f.Version, "ext-") || !maps.Equal(f.Metadata, expiring) {
		t.Fatalf("hand-edited file = %+v, want an ext- version and the expiry alone", f)
	}
	must(os.WriteFile(name, []byte("original"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
	if f, _ := d.GetFile(ctx, "u/x.md"); f.Version != "v1" || f.Metadata["by"] != "me" {
		t.Fatalf("restored file = %+v, want the record's row", f)
	}

	// An append to a hand-edited file keeps the lifetime.
	must(os.WriteFile(name, []byte("- by hand\n"), 0o644))
	if res, err := d.Append(ctx, driver.AppendParams{Path: "u/x.md", Entry: "- appended", MaxChars: 100, Version: "v2", Now: "2029-01-01T00:00:00.000Z"}); err != nil || res.Missing {
		t.Fatalf("append = %+v, %v", res, err)
	}
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})

	// The record's previous state: a write that pins the file (clearing
	// the expiry), then the old bytes put back by hand: the old version,
	// with the pin the record has and without the expiry it no longer has.
	appended, err := d.GetFile(ctx, "u/x.md")
	must(err)
	must(d.ReplaceFile(ctx, driver.File{Path: "u/x.md", Content: "rewritten", Version: "v3", Metadata: pinned}, "v2"))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Pinned: "true"})
	must(os.WriteFile(name, []byte(appended.Content), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Pinned: "true"})
	if f, _ := d.GetFile(ctx, "u/x.md"); f.Version != "v2" {
		t.Fatalf("previous state's bytes = %+v, want version v2", f)
	}

	// A file without a lifetime edited by hand has none; a hand-made
	// file where none was recorded has none; one removed by hand is not
	// listed.
	must(d.CreateFile(ctx, driver.File{Path: "u/p.md", Content: "plain", Version: "v1"}))
	must(os.WriteFile(filepath.Join(d.Root(), "u", "p.md"), []byte("plain, edited"), 0o644))
	wantLifetime(t, d, "u/p.md", driver.Lifetime{})
	must(os.WriteFile(filepath.Join(d.Root(), "u", "z.md"), []byte("hand made"), 0o644))
	wantLifetime(t, d, "u/z.md", driver.Lifetime{})
	must(os.Remove(name))
	if _, ok := listedLifetimes(t, d, "u/")["u/x.md"]; ok {
		t.Fatal("a file removed by hand is listed")
	}
	// Made again by hand over its record: the record's lifetime again.
	must(os.WriteFile(name, []byte("again"), 0o644))
	wantLifetime(t, d, "u/x.md", driver.Lifetime{Pinned: "true"})
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

// TestLifetimeIndexCorrupt: a corrupt index, or one of version 1, is read
// around (each file of its folder read as GetFile reads it) and rebuilt
// from the records by the next write in its folder, a write that did not
// land left pending.
func TestLifetimeIndexCorrupt(t *testing.T) {
	for _, text := range []string{"{not an index", "agentmem-lifetimes 1\nx.md\t\t\t1\t2\t3\n"} {
		d := openDriver(t)
		ctx := t.Context()
		must := fatalOn(t)
		must(d.CreateFile(ctx, driver.File{Path: "u/x.md", Content: "x", Version: "v1", Metadata: expiring}))
		must(d.CreateFile(ctx, driver.File{Path: "u/y.md", Content: "y", Version: "v1", Metadata: pinned}))
		must(d.CreateFile(ctx, driver.File{Path: "u/z.md", Content: "z", Version: "v1"}))
		must(d.CreateFile(ctx, driver.File{Path: "u/w.md", Content: "w", Version: "v1", Metadata: pinned}))
		d.crashAfter = "recorded" // w.md's expiry did not land
		must(d.ReplaceFile(ctx, driver.File{Path: "u/w.md", Content: "w2", Version: "v2", Metadata: expiring}, "v1"))
		d.crashAfter = ""
		must(os.WriteFile(d.lifetimesPath("u"), []byte(text), 0o644))
		wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
		wantLifetime(t, d, "u/y.md", driver.Lifetime{Pinned: "true"})
		wantLifetime(t, d, "u/z.md", driver.Lifetime{})
		wantLifetime(t, d, "u/w.md", driver.Lifetime{Pinned: "true"})
		must(d.ReplaceFile(ctx, driver.File{Path: "u/z.md", Content: "z2", Version: "v2"}, "v1"))
		want := map[string]lifeEntry{"x.md": {Expires: soon}, "y.md": {Pinned: "true"}, "w.md": {Expires: soon, Pending: true}}
		if got := indexOf(t, d, "u"); !maps.Equal(got, want) {
			t.Fatalf("index rebuilt from %q = %+v, want %+v", text, got, want)
		}
		wantLifetime(t, d, "u/x.md", driver.Lifetime{Expires: soon})
		wantLifetime(t, d, "u/y.md", driver.Lifetime{Pinned: "true"})
		wantLifetime(t, d, "u/z.md", driver.Lifetime{})
		wantLifetime(t, d, "u/w.md", driver.Lifetime{Pinned: "true"})
	}
}

// TestLifetimeIndexFormat: names and values that need quoting survive the
// index's text, and lines of another shape (the fingerprints of version
// 1) are refused.
func TestLifetimeIndexFormat(t *testing.T) {
	in := map[string]lifeEntry{
		"a.md":        {Expires: soon},
		"tab\there":   {Pinned: "true", Pending: true},
		`"quoted".md`: {Expires: "odd\nvalue\\"},
	}
	out, err := parseLifetimes(string(formatLifetimes(in)))
	if err != nil || !maps.Equal(out, in) {
		t.Fatalf("parse = %+v, %v; want %+v", out, err, in)
	}
	for _, bad := range []string{"", "agentmem-lifetimes 1\na.md\t\t\t1\t2\t3\n", "agentmem-lifetimes 2\na.md\t\t\n", "agentmem-lifetimes 2\na.md\t\t\ts\t3\n", "agentmem-lifetimes 2\na.md\t\t\tx\n"} {
		if _, err := parseLifetimes(bad); err == nil {
			t.Errorf("parse(%q) took it", bad)
		}
	}
}

// TestLifetimeIndexCursor: a listing's reading of an index finds each
// name asked in order, and one asked out of order; past a bad line the
// index does not know (every file read).
func TestLifetimeIndexCursor(t *testing.T) {
	text := string(formatLifetimes(map[string]lifeEntry{"a.md": {Expires: soon}, "b.md": {Pinned: "true"}, "d\tx.md": {Pinned: "true", Pending: true}}))
	c := &indexCursor{ix: parseIndex(text)}
	for _, q := range []struct {
		name  string
		want  lifeEntry
		named bool
	}{
		{"b.md", lifeEntry{Pinned: "true"}, true},
		{"c.md", lifeEntry{}, false},
		{"d\tx.md", lifeEntry{Pinned: "true", Pending: true}, true},
		{"a.md", lifeEntry{Expires: soon}, true}, // out of order
		{"a.md", lifeEntry{Expires: soon}, true},
		{"0.md", lifeEntry{}, false},
		{"z.md", lifeEntry{}, false},
	} {
		if e, named, known := c.entry(q.name); e != q.want || named != q.named || !known {
			t.Fatalf("entry(%q) = %+v, %v, %v; want %+v, %v, known", q.name, e, named, known, q.want, q.named)
		}
	}
	for _, bad := range []string{"{not an index", lifetimesHeader + "a.md\t\t\ts\nb.md\t\t\n", lifetimesHeader + "a.md\t\t\ts\nc.md"} {
		c = &indexCursor{ix: parseIndex(bad)}
		if e, named, known := c.entry("a.md"); strings.HasPrefix(bad, lifetimesHeader) && (!named || !known || e != (lifeEntry{})) {
			t.Fatalf("%q: entry before the bad line = %+v, %v, %v", bad, e, named, known)
		}
		if _, named, known := c.entry("b.md"); named || known {
			t.Fatalf("%q: entry past the bad line: named %v, known %v; want not known", bad, named, known)
		}
	}
	// The same text is parsed once; another text again.
	d := openDriver(t)
	p := d.parsed("x", []byte(text))
	if d.parsed("x", []byte(text)) != p || d.parsed("x", []byte(text+"z.md\t\t\ts\n")) == p {
		t.Fatal("parsed keeps the wrong index")
	}
}
