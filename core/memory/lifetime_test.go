package memory

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

// lifetimeMem returns a Memory whose store runs on a clock the test moves.
func lifetimeMem(t *testing.T) (*Memory, *store.Store, func(time.Duration)) {
	t.Helper()
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	s := store.New(memtest.NewDriver(t), &store.Options{Now: now})
	t.Cleanup(func() { _ = s.Close() })
	return mustNew(t, s, nil), s, func(d time.Duration) { offset.Add(int64(d)) }
}

// TestWriteMemoryExpires checks write_memory's expires argument: it sets
// an expiry, a write without it keeps the file's, "never" clears it, and
// MEMORY.md, pinned files and unreadable text are refused with what to
// fix; nothing is written then.
func TestWriteMemoryExpires(t *testing.T) {
	m, s, advance := lifetimeMem(t)
	ctx := t.Context()
	w := func(args map[string]any) any {
		t.Helper()
		full := map[string]any{"file": nil, "old_text": nil, "expires": nil}
		for k, v := range args {
			full[k] = v
		}
		return call(t, m, inv(""), "write_memory", full)
	}
	before := s.Now()
	wantWrite(t, w(map[string]any{"file": "trip.md", "content": "- In Bangkok until Friday.", "expires": "7d"}))
	f, err := s.Read(ctx, "main/trip.md", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if d := f.ExpiresAt.Sub(before); d < 7*24*time.Hour-time.Second || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("expiry %v after the write, want 7 days", d)
	}
	wantWrite(t, w(map[string]any{"file": "trip.md", "content": "- Hotel by the river."}))
	if g, _ := s.Read(ctx, "main/trip.md", 1000); !g.ExpiresAt.Equal(f.ExpiresAt) {
		t.Fatalf("an append without expires changed the expiry: %v, want %v", g.ExpiresAt, f.ExpiresAt)
	}
	wantWrite(t, w(map[string]any{"file": "trip.md", "content": "until Friday", "old_text": "until Friday", "expires": "2099-12-31"}))
	if g, _ := s.Read(ctx, "main/trip.md", 1000); !g.ExpiresAt.Equal(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("a date expires at the end of that day; got %v", g.ExpiresAt)
	}
	wantWrite(t, w(map[string]any{"file": "trip.md", "content": "- Back home.", "expires": "never"}))
	if g, _ := s.Read(ctx, "main/trip.md", 1000); !g.ExpiresAt.IsZero() {
		t.Fatalf("never kept the expiry %v", g.ExpiresAt)
	}
	wantToolErr(t, w(map[string]any{"content": "- a fact", "expires": "7d"}), "MEMORY.md never expires")
	wantToolErr(t, w(map[string]any{"file": "x.md", "content": "- a fact", "expires": "soonish"}), "Invalid expires")
	wantToolErr(t, w(map[string]any{"file": "x.md", "content": "- a fact", "expires": "2001-01-01"}), "not in the future")
	if _, err := s.Write(ctx, store.WriteRequest{Path: "main/pin.md", Content: "- pinned\n", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	wantToolErr(t, w(map[string]any{"file": "pin.md", "content": "- more", "expires": "1d"}), "is pinned")
	wantWrite(t, w(map[string]any{"file": "pin.md", "content": "- more"}))
	if g, _ := s.Read(ctx, "main/pin.md", 1000); !g.Pinned || g.Content != "- pinned\n- more\n" {
		t.Fatalf("pinned file after an append = %+v, want the pin kept", g)
	}
	for _, p := range []string{"main/MEMORY.md", "main/x.md"} {
		if _, err := s.Read(ctx, p, 10); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s was written by a refused call (%v)", p, err)
		}
	}
	// Expired: gone from the snapshot and from read_memory; a write
	// starts the file anew, without the old expiry.
	wantWrite(t, w(map[string]any{"file": "week.md", "content": "- Sprint goal: ship search.", "expires": "2h"}))
	advance(3 * time.Hour)
	snap, err := m.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap, "week.md") {
		t.Fatalf("the snapshot lists an expired file:\n%s", snap)
	}
	wantToolErr(t, call(t, m, inv(""), "read_memory", map[string]any{"file": "week.md"}), "week.md")
	wantWrite(t, w(map[string]any{"file": "week.md", "content": "- Sprint goal: docs."}))
	if g, _ := s.Read(ctx, "main/week.md", 1000); g.Content != "- Sprint goal: docs.\n" || !g.ExpiresAt.IsZero() {
		t.Fatalf("a write over an expired file = %+v, want a new file", g)
	}
}

// TestWriteMemoryRetryAfterExpiry checks that a retried write_memory call
// whose expiry has passed since the original landed replays it, as its
// receipt says, rather than refusing the expiry; a new call with the same
// arguments is refused, and the replay writes nothing.
func TestWriteMemoryRetryAfterExpiry(t *testing.T) {
	m, s, advance := lifetimeMem(t)
	at := s.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	args := map[string]any{"file": "trip.md", "content": "- In Bangkok until six.", "old_text": nil, "expires": at}
	first := inv("")
	orig := wantWrite(t, call(t, m, first, "write_memory", args))
	advance(2 * time.Hour)
	again := wantWrite(t, call(t, m, first, "write_memory", args))
	if !again.Replayed || again.Version != orig.Version || again.Status != orig.Status {
		t.Fatalf("retry after the expiry = %+v, want the replay of %+v", again, orig)
	}
	wantToolErr(t, call(t, m, inv(""), "write_memory", args), "not in the future")
	if _, err := s.Read(t.Context(), "main/trip.md", 100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the expired file after the retries: %v, want it gone", err)
	}
}

// TestSnapshotMarksLifetimes checks the memory block's file list: pinned
// files first and marked, expiring files marked with their expiry, so
// the model sees both.
func TestSnapshotMarksLifetimes(t *testing.T) {
	m, s, _ := lifetimeMem(t)
	ctx := t.Context()
	at := s.Now().Add(48 * time.Hour)
	for _, r := range []store.WriteRequest{
		{Path: "main/MEMORY.md", Content: "- a fact\n"},
		{Path: "main/a.md", Content: "a\n"},
		{Path: "main/trip.md", Content: "trip\n", ExpiresAt: at},
		{Path: "main/z-pinned.md", Content: "z\n", Pinned: true},
	} {
		if _, err := s.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := m.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "- z-pinned.md (pinned)\n- a.md\n- trip.md (expires " + FormatExpiry(at) + ")"
	if !strings.Contains(snap, want) {
		t.Fatalf("snapshot:\n%s\nwant the list\n%s", snap, want)
	}
}

// TestParseExpiry checks the forms an expiry takes and the refusals.
func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"7d":                   now.Add(7 * 24 * time.Hour),
		"2w":                   now.Add(14 * 24 * time.Hour),
		"90m":                  now.Add(90 * time.Minute),
		" 12h ":                now.Add(12 * time.Hour),
		"2026-12-31":           time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-03T18:00:00Z": time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC),
		"never":                {},
		"NEVER":                {},
	} {
		got, err := ParseExpiry(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "0d", "-3h", "2026-12-01", "2026-12-02T09:00:00Z", "5x"} {
		if _, err := ParseExpiry(in, now); !errors.Is(err, store.ErrInvalidLifetime) {
			t.Errorf("ParseExpiry(%q) = %v, want ErrInvalidLifetime", in, err)
		}
	}
}
