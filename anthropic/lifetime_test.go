package anthropic

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// testClock is a settable store clock.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) add(d time.Duration) { c.ns.Add(int64(d)) }

func clockedTool(t *testing.T) (*Tool, *store.Store, *testClock) {
	t.Helper()
	c := &testClock{}
	c.ns.Store(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC).UnixNano())
	s := store.New(newMemDriver(t), &store.Options{Now: c.now})
	t.Cleanup(func() { _ = s.Close() })
	return newTool(t, s), s, c
}

// put writes a file with a lifetime, as write_memory or the CLI would.
func put(t *testing.T, s *store.Store, path, content string, expires time.Time, pinned bool) {
	t.Helper()
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: content, ExpiresAt: expires, Pinned: pinned,
		Metadata: map[string]string{"updated_by": "cli"}}); err != nil {
		t.Fatal(err)
	}
}

func lifetimeOf(t *testing.T, s *store.Store, path string) (time.Time, bool) {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<20)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return f.ExpiresAt, f.Pinned
}

// Every command that rewrites a file keeps its expiry and pin:
// str_replace, insert, and rename of a file or of its directory.
func TestCommandsKeepLifetime(t *testing.T) {
	tl, s, c := clockedTool(t)
	expires := c.now().Add(72 * time.Hour)
	put(t, s, "u/memories/trip.md", "in Bangkok\nuntil Friday\n", expires, false)
	put(t, s, "u/memories/keep.md", "always\n", time.Time{}, true)
	put(t, s, "u/memories/dir/a.md", "a\n", expires, false)
	put(t, s, "u/memories/dir/b.md", "b\n", time.Time{}, true)
	check := func(path string, wantExpires time.Time, wantPinned bool) {
		t.Helper()
		if e, p := lifetimeOf(t, s, path); !e.Equal(wantExpires) || p != wantPinned {
			t.Fatalf("%s: expires %s pinned %v, want %s %v", path, e, p, wantExpires, wantPinned)
		}
	}
	for i, cmd := range []Command{
		{Command: "str_replace", Path: "/memories/trip.md", OldStr: "Bangkok", NewStr: "Chiang Mai"},
		{Command: "insert", Path: "/memories/trip.md", InsertLine: 0, InsertText: "# Trip"},
		{Command: "str_replace", Path: "/memories/keep.md", OldStr: "always", NewStr: "always, really"},
		{Command: "insert", Path: "/memories/keep.md", InsertLine: 1, InsertText: "more"},
	} {
		if r := exec(t, tl, "u", "edit-"+string(rune('a'+i)), cmd); r.IsError {
			t.Fatalf("%+v: %s", cmd, r.Text)
		}
	}
	check("u/memories/trip.md", expires, false)
	check("u/memories/keep.md", time.Time{}, true)
	if r := exec(t, tl, "u", "mv1", Command{Command: "rename", OldPath: "/memories/trip.md", NewPath: "/memories/travel.md"}); r.IsError {
		t.Fatal(r.Text)
	}
	if r := exec(t, tl, "u", "mv2", Command{Command: "rename", OldPath: "/memories/keep.md", NewPath: "/memories/kept.md"}); r.IsError {
		t.Fatal(r.Text)
	}
	if r := exec(t, tl, "u", "mv3", Command{Command: "rename", OldPath: "/memories/dir", NewPath: "/memories/moved"}); r.IsError {
		t.Fatal(r.Text)
	}
	check("u/memories/travel.md", expires, false)
	check("u/memories/kept.md", time.Time{}, true)
	check("u/memories/moved/a.md", expires, false)
	check("u/memories/moved/b.md", time.Time{}, true)
	if f, _ := s.Read(t.Context(), "u/memories/moved/b.md", 100); f.Metadata["updated_by"] != "cli" {
		t.Fatalf("rename lost the metadata: %+v", f)
	}
	// create never overwrites, so never clears a lifetime.
	if r := exec(t, tl, "u", "cr", Command{Command: "create", Path: "/memories/kept.md", FileText: "x"}); !r.IsError {
		t.Fatalf("create over a file: %+v", r)
	}
	check("u/memories/kept.md", time.Time{}, true)
}

// An expired file is absent to the memory tool at once, before any
// backend deletes it: view lists and shows nothing of it, edits report
// that it does not exist, and create writes its path anew (without the
// old expiry).
func TestExpiredFileIsInvisible(t *testing.T) {
	tl, s, c := clockedTool(t)
	put(t, s, "u/memories/trip.md", "in Bangkok\n", c.now().Add(time.Hour), false)
	put(t, s, "u/memories/keep.md", "kept\n", time.Time{}, false)
	put(t, s, "u/memories/old/only.md", "old\n", c.now().Add(time.Hour), false)
	if r := exec(t, tl, "u", "v0", Command{Command: "view", Path: "/memories"}); !strings.Contains(r.Text, "/memories/trip.md") {
		t.Fatalf("before expiry: %s", r.Text)
	}
	c.add(2 * time.Hour)
	r := exec(t, tl, "u", "v1", Command{Command: "view", Path: "/memories"})
	if r.IsError || strings.Contains(r.Text, "trip.md") || strings.Contains(r.Text, "/memories/old") || !strings.Contains(r.Text, "/memories/keep.md") {
		t.Fatalf("view after expiry:\n%s", r.Text)
	}
	for _, cmd := range []Command{
		{Command: "view", Path: "/memories/trip.md"},
		{Command: "view", Path: "/memories/old"},
		{Command: "str_replace", Path: "/memories/trip.md", OldStr: "Bangkok", NewStr: "Hue"},
		{Command: "insert", Path: "/memories/trip.md", InsertLine: 0, InsertText: "x"},
		{Command: "rename", OldPath: "/memories/trip.md", NewPath: "/memories/t.md"},
		{Command: "delete", Path: "/memories/trip.md"},
	} {
		if r := exec(t, tl, "u", "x-"+cmd.Command+cmd.Path, cmd); !r.IsError || !strings.Contains(r.Text, "does not exist") {
			t.Fatalf("%+v on an expired file: %+v", cmd, r)
		}
	}
	if r := exec(t, tl, "u", "cr", Command{Command: "create", Path: "/memories/trip.md", FileText: "back home\n"}); r.IsError {
		t.Fatalf("create over an expired file: %s", r.Text)
	}
	if e, p := lifetimeOf(t, s, "u/memories/trip.md"); !e.IsZero() || p {
		t.Fatalf("the new file has a lifetime: %s %v", e, p)
	}
	if r := exec(t, tl, "u", "v2", Command{Command: "view", Path: "/memories/trip.md"}); !strings.Contains(r.Text, "back home") {
		t.Fatalf("view of the new file: %s", r.Text)
	}
}
