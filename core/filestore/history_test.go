package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func openDriver(t *testing.T) *Driver {
	t.Helper()
	d, err := New(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// version returns a store-like version (26 Crockford digits) for i.
func version(i int) string {
	return fmt.Sprintf("01J%023d", i)
}

func entry(path, v string, expires time.Time) driver.HistoryEntry {
	return driver.HistoryEntry{Path: path, Version: v, Kind: driver.KindWrite, Content: "c " + v + "\n",
		Metadata: map[string]string{"by": "t"}, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ExpiresAt: expires}
}

func listAll(t *testing.T, d *Driver, prefix string, page int) []string {
	t.Helper()
	var keys []string
	after := ""
	for {
		es, err := d.ListHistory(t.Context(), driver.HistoryParams{Prefix: prefix, After: after, Limit: page})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			keys = append(keys, e.Key())
			after = e.Key()
		}
		if len(es) < page {
			return keys
		}
	}
}

// TestHistoryOnDisk: entries live in the sidecar, one folder per path,
// named so a folder read gives them newest first; a pending entry is
// completed by a rename and dropped with the folders it leaves empty;
// nothing shows in the listing of files.
func TestHistoryOnDisk(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	far := time.Now().Add(time.Hour)
	for i := range 3 {
		if err := d.PutHistory(ctx, entry("kamal/main/MEMORY.md", version(i), far)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.PutHistory(ctx, entry("kamal/main/MEMORY.md", version(1), far)); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("PutHistory of a taken key: %v", err)
	}
	dir := filepath.Join(d.Root(), SidecarDir, "history", "kamal", "main", "MEMORY.md")
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	want := []string{}
	for _, i := range []int{2, 1, 0} {
		want = append(want, "~"+strings.TrimPrefix(driver.HistoryKey("", version(i)), " ")+".json")
	}
	if !slices.Equal(names, want) {
		t.Fatalf("entry files %v, want %v (newest first)", names, want)
	}
	files, err := d.ListFiles(ctx, driver.ListParams{Limit: 10})
	if err != nil || len(files) != 0 {
		t.Fatalf("ListFiles = %v, %v: history must not show", files, err)
	}

	p := entry("kamal/notes/a.md", version(7), far)
	p.Pending = true
	if err := d.PutHistory(ctx, p); err != nil {
		t.Fatal(err)
	}
	if e, err := d.GetHistory(ctx, p.Path, p.Version); err != nil || e == nil || !e.Pending || e.Content != p.Content || e.Metadata["by"] != "t" || !e.ExpiresAt.Equal(far) {
		t.Fatalf("GetHistory(pending) = %+v, %v", e, err)
	}
	if err := d.CompleteHistory(ctx, p.Path, p.Version); err != nil {
		t.Fatal(err)
	}
	if err := d.CompleteHistory(ctx, p.Path, p.Version); err != nil {
		t.Fatalf("completing twice: %v", err)
	}
	if e, err := d.GetHistory(ctx, p.Path, p.Version); err != nil || e == nil || e.Pending {
		t.Fatalf("GetHistory(completed) = %+v, %v", e, err)
	}
	if err := d.DropHistory(ctx, p.Path, p.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("DropHistory(completed) = %v", err)
	}
	if err := d.CompleteHistory(ctx, p.Path, version(8)); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("CompleteHistory(missing) = %v", err)
	}
	// Another version with the same first 26 characters is not the entry.
	if e, err := d.GetHistory(ctx, p.Path, p.Version+"-other"); err != nil || e != nil {
		t.Fatalf("GetHistory(same stem) = %+v, %v", e, err)
	}

	q := entry("kamal/tmp/deep/b.md", version(9), far)
	q.Pending = true
	if err := d.PutHistory(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, q.Path, q.Version); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, q.Path, q.Version); err != nil {
		t.Fatalf("dropping a missing entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.Root(), SidecarDir, "history", "kamal", "tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("emptied folders left behind: %v", err)
	}
}

// TestListHistoryOrder: over paths that extend each other ("a.md",
// "a.md.bak", "a.md/x.md", "a.md-1") and versions a name cannot hold,
// every prefix lists exactly the keys a sort gives, whatever the page
// size.
func TestListHistoryOrder(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	paths := []string{"a.md", "a.md.bak", "a.md/x.md", "a.md-1", "a", "ab/c.md", "a/b.md", "b/a.md", "b/a.md/c/d.md"}
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []string
	for i := range 60 {
		v := version(rng.IntN(1_000_000))
		switch i % 10 {
		case 3:
			v = "v/" + v[:5] // not a store version: stored under a hex name
		case 6:
			v = v[:20] // shorter than a stem
		}
		e := entry(paths[i%len(paths)], v, time.Time{})
		err := d.PutHistory(ctx, e)
		if errors.Is(err, driver.ErrPrecondition) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.Key())
	}
	slices.Sort(keys)
	for _, prefix := range []string{"", "a", "a.md", "a.md ", "a.md.", "a.md/", "a/", "b/", "b/a.md ", "b/a.md/", "c/", "ab"} {
		var want []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		for _, page := range []int{1, 3, 100} {
			if got := listAll(t, d, prefix, page); !slices.Equal(got, want) {
				t.Fatalf("prefix %q, pages of %d:\n got %q\nwant %q", prefix, page, got, want)
			}
		}
	}
}

// TestListHistoryReadsOnlyThePrefix: listing one user's history reads
// that user's folders only, and one file's history its folder alone.
func TestListHistoryReadsOnlyThePrefix(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	for u := range 20 {
		for _, f := range []string{"main/MEMORY.md", "main/notes.md", "work/MEMORY.md"} {
			for v := range 2 {
				if err := d.PutHistory(ctx, entry(fmt.Sprintf("u%02d/%s", u, f), version(u*10+v), time.Time{})); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var read []string
	d.historyRead = func(path string) { read = append(read, path) }
	for _, c := range []struct {
		prefix, under string
		limit, n      int
	}{
		{"u07", "u07", 100, 6}, // reads the root folder, then u07's only
		{"u07/", "u07", 100, 6},
		{"u07/main/", "u07/main", 100, 4},
		{"u07/main/notes.md ", "u07/main/notes.md", 100, 2},
	} {
		read = nil
		es, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: c.prefix, Limit: c.limit})
		if err != nil || len(es) != c.n {
			t.Fatalf("ListHistory(%q) = %d entries, %v; want %d", c.prefix, len(es), err, c.n)
		}
		for _, p := range read {
			if p != c.under && !strings.HasPrefix(p, c.under+"/") && (p != "" || strings.Contains(c.prefix, "/")) {
				t.Fatalf("ListHistory(%q) read the folder %q", c.prefix, p)
			}
		}
	}
	// A page of one stops at the first entry.
	read = nil
	if _, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "u07/", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, []string{"u07", "u07/main", "u07/main/MEMORY.md"}) {
		t.Fatalf("a page of one read %q", read)
	}
}

// TestAppendRecordsHistory: an append with an entry stores it complete,
// with the version it replaced and the new content; an append that
// writes nothing records nothing.
func TestAppendRecordsHistory(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	far := time.Now().Add(time.Hour)
	if err := d.CreateFile(ctx, driver.File{Path: "u/a.md", Content: "one  \n", Version: version(1)}); err != nil {
		t.Fatal(err)
	}
	h := entry("u/a.md", version(2), far)
	h.Content, h.OperationID = "", "op"
	r := driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindWrite, Path: "u/a.md", Version: version(2), Completed: true, ExpiresAt: far}
	res, err := d.Append(ctx, driver.AppendParams{Path: "u/a.md", Entry: "two\n", MaxChars: 100, Version: version(2), Receipt: &r, History: &h})
	if err != nil || res.Missing || res.Existing != nil {
		t.Fatalf("Append = %+v, %v", res, err)
	}
	e, err := d.GetHistory(ctx, "u/a.md", version(2))
	if err != nil || e == nil || e.Pending || e.Previous != version(1) || e.Content != "one\ntwo\n" || e.OperationID != "op" {
		t.Fatalf("entry of the append = %+v, %v", e, err)
	}
	// A replay, a missing file and a refusal record nothing.
	h3 := entry("u/a.md", version(3), far)
	for _, p := range []driver.AppendParams{
		{Path: "u/a.md", Entry: "two\n", MaxChars: 100, Version: version(3), Receipt: &r, History: &h3},
		{Path: "u/a.md", Entry: "three\n", MaxChars: 5, Version: version(3), History: &h3},
		{Path: "u/none.md", Entry: "three\n", MaxChars: 100, Version: version(3), History: &driver.HistoryEntry{Path: "u/none.md", Version: version(3)}},
	} {
		if _, err := d.Append(ctx, p); err != nil && !errors.Is(err, driver.ErrTooLarge) {
			t.Fatal(err)
		}
	}
	if n := len(listAll(t, d, "u/", 10)); n != 1 {
		t.Fatalf("%d entries after appends that wrote nothing, want 1", n)
	}
}

// TestHistoryPruneAndDelete: a prune removes the expired entries the
// expiry index names (and their folders) and keeps the rest; DeleteHistory
// removes a prefix's entries over several batches and nothing else.
func TestHistoryPruneAndDelete(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	now := time.Now()
	for i := range 5 {
		if err := d.PutHistory(ctx, entry("old/a.md", version(i), now.Add(-time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	p := entry("old/b.md", version(9), now.Add(-time.Minute))
	p.Pending = true
	if err := d.PutHistory(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := d.PutHistory(ctx, entry("old/a.md", version(5), now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	n, err := d.PruneExpired(ctx, now)
	if err != nil || n != 6 {
		t.Fatalf("PruneExpired = %d, %v; want 6", n, err)
	}
	if got := listAll(t, d, "old/", 10); len(got) != 1 || got[0] != driver.HistoryKey("old/a.md", version(5)) {
		t.Fatalf("left after the prune: %q", got)
	}
	if _, err := os.Stat(d.historyDir("old/b.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the emptied folder of old/b.md: %v", err)
	}

	for i := range 2*historyBatch + 5 {
		if err := d.PutHistory(ctx, entry(fmt.Sprintf("k/f%d.md", i%7), version(100+i), time.Time{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.PutHistory(ctx, entry("k-b/a.md", version(1), time.Time{})); err != nil {
		t.Fatal(err)
	}
	n, err = d.DeleteHistory(ctx, "k/")
	if err != nil || n != 2*historyBatch+5 {
		t.Fatalf("DeleteHistory = %d, %v; want %d", n, err, 2*historyBatch+5)
	}
	if _, err := os.Stat(d.historyDir("k")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the emptied folder k: %v", err)
	}
	if got := listAll(t, d, "", 10); len(got) != 2 {
		t.Fatalf("left after DeleteHistory: %q", got)
	}
}

// TestHistoryThroughTheStore: a store with history over a directory
// records writes, appends and deletes, and History pages through them.
func TestHistoryThroughTheStore(t *testing.T) {
	ctx := t.Context()
	s := openWith(t, t.TempDir(), &store.Options{History: &store.HistoryOptions{}})
	m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- one\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, store.AppendRequest{Path: "u/main/MEMORY.md", Text: "two", MaxChars: 100}); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Read(ctx, "u/main/MEMORY.md", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/MEMORY.md", Expected: cur.Version}); err != nil {
		t.Fatal(err)
	}
	page, err := s.History(ctx, store.HistoryRequest{Path: "u/main/MEMORY.md", Limit: 10})
	if err != nil || len(page.Entries) != 3 {
		t.Fatalf("History = %+v, %v", page, err)
	}
	es := page.Entries
	if !es[0].Deleted || es[1].Content != "- one\ntwo\n" || es[1].Previous != m.Version || es[2].Version != m.Version {
		t.Fatalf("History entries = %+v", es)
	}
}

// TestPendingEntryCompletedWhenReplaced: an append that crashed between
// its file and its entry's completion leaves a pending entry for a
// version that names no operation; the next change of the file completes
// it, so the history keeps the change once the row moves on.
func TestPendingEntryCompletedWhenReplaced(t *testing.T) {
	ctx := t.Context()
	d := openDriver(t)
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	// What the crashed append left: the file at its version, its entry
	// pending.
	if err := d.CreateFile(ctx, driver.File{Path: "u/a.md", Content: "one\n", Version: version(1)}); err != nil {
		t.Fatal(err)
	}
	e := entry("u/a.md", version(1), time.Now().Add(time.Hour))
	e.Content, e.Pending = "one\n", true
	if err := d.PutHistory(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "u/a.md", Content: "two\n", Expected: version(1)}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.GetHistory(ctx, "u/a.md", version(1)); err != nil || got == nil || got.Pending {
		t.Fatalf("entry of the replaced version = %+v, %v; want it complete", got, err)
	}
	page, err := s.History(ctx, store.HistoryRequest{Path: "u/a.md", Limit: 10})
	if err != nil || len(page.Entries) != 2 || page.Entries[1].Version != version(1) {
		t.Fatalf("History = %+v, %v", page, err)
	}
}
