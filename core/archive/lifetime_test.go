package archive

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// clock is a settable store clock.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock    { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

func clockStore(t *testing.T, c *clock) *store.Store {
	t.Helper()
	s := store.New(newMemDriver(t), &store.Options{Now: c.now})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// An export records each file's expiry and pin, an import restores them
// (and a rerun finds the files unchanged); an expired file is never
// exported, and a file that expired after its export is not imported.
func TestLifetimeRoundTrip(t *testing.T) {
	c := newClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	src := clockStore(t, c)
	expires := c.now().Add(48 * time.Hour)
	for _, w := range []store.WriteRequest{
		{Path: "k/main/MEMORY.md", Content: "- plain\n"},
		{Path: "k/main/keep.md", Content: "- pinned\n", Pinned: true},
		{Path: "k/main/trip.md", Content: "- in Bangkok\n", ExpiresAt: expires},
		{Path: "k/main/gone.md", Content: "- soon gone\n", ExpiresAt: c.now().Add(time.Hour)},
	} {
		if _, err := src.Write(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	c.add(2 * time.Hour) // gone.md has expired: the store hides it
	b := export(t, src, "k/")
	man, err := Check(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Entry{}
	for _, e := range man.Files {
		byPath[e.Path] = e
	}
	if _, ok := byPath["k/main/gone.md"]; ok || len(man.Files) != 3 {
		t.Fatalf("manifest %+v: an expired file was exported", man.Files)
	}
	if e := byPath["k/main/keep.md"]; !e.Pinned || !e.ExpiresAt.IsZero() {
		t.Fatalf("keep.md %+v", e)
	}
	if e := byPath["k/main/trip.md"]; e.Pinned || !e.ExpiresAt.Equal(expires) {
		t.Fatalf("trip.md %+v, want expires %s", e, expires)
	}
	if e := byPath["k/main/MEMORY.md"]; e.Pinned || !e.ExpiresAt.IsZero() {
		t.Fatalf("MEMORY.md %+v", e)
	}
	// The manifest says it in JSON a person can read; a plain file says nothing.
	_, js := unpackManifest(t, b)
	if !strings.Contains(js, `"expires_at": "2026-12-04T09:00:00Z"`) || !strings.Contains(js, `"pinned": true`) ||
		strings.Count(js, `"expires_at"`) != 1 || strings.Count(js, `"pinned"`) != 1 {
		t.Fatalf("manifest JSON:\n%s", js)
	}

	dst := clockStore(t, c)
	st, err := Import(t.Context(), dst, bytes.NewReader(b), nil)
	if err != nil || st.Created != 3 || st.Expired != 0 {
		t.Fatalf("Import = %+v, %v", st, err)
	}
	for p, e := range byPath {
		f, err := dst.Read(t.Context(), p, wholeFile)
		if err != nil || !f.ExpiresAt.Equal(e.ExpiresAt) || f.Pinned != e.Pinned {
			t.Fatalf("imported %s = %+v, %v; want expires %s pinned %v", p, f, err, e.ExpiresAt, e.Pinned)
		}
	}
	if st, err := Import(t.Context(), dst, bytes.NewReader(b), nil); err != nil || st.Unchanged != 3 {
		t.Fatalf("rerun = %+v, %v", st, err)
	}

	// A file whose lifetime differs differs; Force gives it the archive's.
	other := clockStore(t, c)
	if _, err := other.Write(t.Context(), store.WriteRequest{Path: "k/main/keep.md", Content: "- pinned\n"}); err != nil {
		t.Fatal(err)
	}
	if st, err := Import(t.Context(), other, bytes.NewReader(b), nil); err != nil || len(st.Differ) != 1 {
		t.Fatalf("unpinned copy: %+v, %v", st, err)
	}
	if st, err := Import(t.Context(), other, bytes.NewReader(b), &ImportOptions{Force: true}); err != nil || st.Replaced != 1 {
		t.Fatalf("Force: %+v, %v", st, err)
	}
	if f, err := other.Read(t.Context(), "k/main/keep.md", wholeFile); err != nil || !f.Pinned {
		t.Fatalf("after Force %+v, %v", f, err)
	}

	// Imported after trip.md's expiry: it is skipped, the rest lands.
	c.add(72 * time.Hour)
	late := clockStore(t, c)
	st, err = Import(t.Context(), late, bytes.NewReader(b), &ImportOptions{Operation: &store.Operation{ID: "imp", Fingerprint: "f"}})
	if err != nil || st.Created != 2 || st.Expired != 1 {
		t.Fatalf("late Import = %+v, %v", st, err)
	}
	if got := content(t, late, "k/main/trip.md"); got != "<absent>" {
		t.Fatalf("an expired file was imported: %q", got)
	}
}

// A manifest that both pins a file and gives it an expiry is refused
// before anything is written.
func TestLifetimeRefusedManifest(t *testing.T) {
	c := newClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	src := clockStore(t, c)
	if _, err := src.Write(t.Context(), store.WriteRequest{Path: "k/a.md", Content: "a\n", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	b := export(t, src, "")
	files, js := unpackManifest(t, b)
	js = strings.Replace(js, `"pinned": true`, `"pinned": true, "expires_at": "2026-12-31T00:00:00Z"`, 1)
	bad := entries(t, append(files, ManifestName, js)...)
	dst := clockStore(t, c)
	if _, err := Import(t.Context(), dst, bytes.NewReader(bad), nil); !errors.Is(err, ErrDamaged) || !errors.Is(err, store.ErrInvalidLifetime) {
		t.Fatalf("Import = %v, want ErrDamaged and store.ErrInvalidLifetime", err)
	}
	if got := content(t, dst, "k/a.md"); got != "<absent>" {
		t.Fatalf("written: %q", got)
	}
}

// unpackManifest returns an archive's file entries (name, body, …) and
// its manifest's JSON.
func unpackManifest(t *testing.T, b []byte) ([]string, string) {
	t.Helper()
	kv := unpack(t, b)
	if len(kv) < 2 || kv[len(kv)-2] != ManifestName {
		t.Fatalf("entries %q", kv)
	}
	return kv[:len(kv)-2], kv[len(kv)-1]
}
