package contract

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// lifetimeCases pin a file's expiry and pin (issue 39) on every backend:
// an expired file is invisible at once on every read path, before anything
// deletes it; its deletion is recorded once, by agentmem-expiry, whichever
// stores meet it; a restore brings it back; a create or an append over it
// starts a new file; a replay answers from its receipt; a process whose
// clock lags cannot bring it back; appends keep the lifetime, writes state
// it.
var lifetimeCases = []Case{
	{"lifetime_listed_by_driver", func(t *testing.T, e *Env) {
		// Every listing a driver returns carries the lifetime, read in
		// the same request: what lets the store hide an expired file
		// without reading it.
		at := e.Clock.Now().Add(time.Hour)
		lifetimeWrite(t, e.Store, "ld/a.md", "expiring", at, false)
		lifetimeWrite(t, e.Store, "ld/b.md", "pinned", time.Time{}, true)
		create(t, e.Store, "ld/c.md", "plain")
		want := map[string]driver.Lifetime{
			"ld/a.md": {Expires: driver.FormatExpiry(at)},
			"ld/b.md": {Pinned: "true"},
			"ld/c.md": {},
		}
		entries, err := e.Driver.ListFiles(ctx(t), driver.ListParams{Prefix: "ld/", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		checkLifetimes(t, "ListFiles", entries, want)
		if sn, ok := e.Driver.(driver.SnapshotReader); ok && driver.CapabilitiesOf(e.Driver).Snapshot {
			_, entries, err := sn.ReadSnapshot(ctx(t), driver.SnapshotParams{Path: "ld/a.md", List: driver.ListParams{Prefix: "ld/", Limit: 10}})
			if err != nil {
				t.Fatal(err)
			}
			checkLifetimes(t, "ReadSnapshot", entries, want)
		}
		if sr, ok := e.Driver.(driver.ScopeReader); ok && driver.CapabilitiesOf(e.Driver).ScopeRead {
			files, err := sr.ReadScope(ctx(t), driver.ScopeParams{Prefix: "ld/", Limit: 10, MaxChars: 100})
			if err != nil {
				t.Fatal(err)
			}
			var scoped []driver.Entry
			for _, f := range files {
				scoped = append(scoped, driver.Entry{Path: f.Path, Lifetime: f.Lifetime})
			}
			checkLifetimes(t, "ReadScope", scoped, want)
		}
		got, err := e.Store.ListEntries(ctx(t), "ld/", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || !got[0].ExpiresAt().Equal(at.Truncate(time.Millisecond)) || got[0].Pinned || !got[1].Pinned || !got[1].ExpiresAt().IsZero() || got[2].Pinned {
			t.Fatalf("ListEntries = %+v", got)
		}
		f := read(t, e.Store, "ld/a.md", 100)
		if !f.ExpiresAt.Equal(at.Truncate(time.Millisecond)) || f.Pinned || f.Metadata != nil {
			t.Fatalf("Read = %+v: want the expiry, no pin, no metadata (the store's keys are not metadata)", f)
		}
	}},
	{"lifetime_expired_hidden_everywhere", func(t *testing.T, e *Env) {
		const p = "eh/main/"
		lifetimeWrite(t, e.Store, p+"trip.md", "- In Bangkok until Friday, the heron hotel.\n", e.Clock.Now().Add(time.Hour), false)
		lifetimeWrite(t, e.Store, p+"pin.md", "- The heron is pinned.\n", time.Time{}, true)
		lifetimeWrite(t, e.Store, "eh-gone/main/MEMORY.md", "- all of this user's memory expires\n", e.Clock.Now().Add(time.Hour), false)
		create(t, e.Store, p+"MEMORY.md", "- The heron stays.\n")
		searchReq := func(m search.Mode) search.Request {
			return search.Request{Mode: m, Prefix: p, Query: "heron", Limit: 10, MaxFiles: 100, MaxChars: 10000, MaxFileChars: 1000}
		}
		// The folder's term index is built now, with the file in it: after
		// the expiry the search must leave it out all the same.
		eq(t, "matches before the expiry", len(mustSearch(t, e.Store, searchReq(search.BM25)).Matches), 3)
		e.Clock.Advance(time.Hour + time.Second)
		if f := read(t, e.Store, p+"trip.md", 100); f != nil {
			t.Fatalf("Read of an expired file = %+v, want ErrNotFound", f)
		}
		eqSlice(t, "ListPaths", list(t, e.Store, p, 10), []string{p + "MEMORY.md", p + "pin.md"})
		var walked []string
		for path, err := range e.Store.Walk(ctx(t), p, 0) {
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, path)
		}
		eqSlice(t, "Walk", walked, []string{p + "MEMORY.md", p + "pin.md"})
		snap, err := e.Store.ReadAndList(ctx(t), store.ReadAndListRequest{Path: p + "trip.md", MaxChars: 100, Prefix: p, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if snap.File != nil {
			t.Fatalf("ReadAndList read an expired file: %+v", snap.File)
		}
		eqSlice(t, "ReadAndList paths", snap.Paths, []string{p + "MEMORY.md", p + "pin.md"})
		if len(snap.Entries) != 2 || !snap.Entries[1].Pinned {
			t.Fatalf("ReadAndList entries = %+v, want pin.md pinned", snap.Entries)
		}
		files, err := e.Store.ReadFiles(ctx(t), []string{p + "trip.md", p + "pin.md"}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || files[0].Path != p+"pin.md" {
			t.Fatalf("ReadFiles = %d files, want pin.md only", len(files))
		}
		for _, m := range []search.Mode{search.BM25, search.Literal} {
			res := mustSearch(t, e.Store, searchReq(m))
			got := matchPaths(res)
			slices.Sort(got)
			eqSlice(t, "search "+string(m), got, []string{p + "MEMORY.md", p + "pin.md"})
		}
		if _, err := e.Store.ReadVersion(ctx(t), p+"trip.md", "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ReadVersion of an expired file: %v, want ErrNotFound", err)
		}
		ns, err := e.Store.Namespaces(ctx(t), store.NamespacesRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		eqSlice(t, "Namespaces", ns.Namespaces, []string{"eh"})
		var buf bytes.Buffer
		n, err := archive.Export(ctx(t), e.Store, p, &buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "files exported", n, 2)
		if strings.Contains(buf.String(), "Bangkok") {
			t.Fatal("the export holds the expired file's content")
		}
	}},
	{"lifetime_expiry_recorded_once", func(t *testing.T, e *Env) {
		// Two stores (two processes) meet the expired file: one delete
		// lands, by agentmem-expiry, recorded once; restore brings the
		// file back without its expiry.
		a, b := e.historyStore(t), e.historyStore(t)
		const path = "er/main/trip.md"
		v := lifetimeWrite(t, a, path, "- In Bangkok until Friday.\n", e.Clock.Now().Add(time.Minute), false)
		e.Clock.Advance(2 * time.Minute)
		na, erra := a.PruneExpired(ctx(t))
		nb, errb := b.PruneExpired(ctx(t))
		if erra != nil || errb != nil {
			t.Fatalf("PruneExpired: %v, %v", erra, errb)
		}
		if na < 1 {
			t.Fatalf("the first PruneExpired removed %d rows, want the expired file", na)
		}
		_ = nb
		entries := history(t, b, path, 10)
		if len(entries) != 2 || !entries[0].Deleted || entries[0].Metadata[store.UpdatedByKey] != store.ExpiryUpdatedBy || entries[1].Version != v {
			t.Fatalf("history = %s, want the write, then one delete by %s", describe(entries), store.ExpiryUpdatedBy)
		}
		if !entries[1].ExpiresAt.After(time.Time{}) {
			t.Fatalf("the write's entry shows no expiry: %+v", entries[1])
		}
		if _, err := b.Restore(ctx(t), store.RestoreRequest{Path: path, Version: v}); err != nil {
			t.Fatalf("restore after expiry: %v", err)
		}
		f := read(t, a, path, 100)
		if f == nil || f.Content != "- In Bangkok until Friday.\n" || !f.ExpiresAt.IsZero() {
			t.Fatalf("restored file = %+v, want the content back, with no expiry", f)
		}
	}},
	{"lifetime_history_records_due_expiry", func(t *testing.T, e *Env) {
		// Without a prune, a file's history (and a prefix's) records the
		// expiry that is due before it is read.
		s := e.historyStore(t)
		lifetimeWrite(t, s, "eh2/a.md", "a", e.Clock.Now().Add(time.Minute), false)
		lifetimeWrite(t, s, "eh2/sub/b.md", "b", e.Clock.Now().Add(time.Minute), false)
		e.Clock.Advance(2 * time.Minute)
		if h := history(t, s, "eh2/a.md", 10); len(h) != 2 || !h[0].Deleted {
			t.Fatalf("history of a.md = %s, want its expiry first", describe(h))
		}
		if h := history(t, s, "eh2/", 10); len(h) != 4 || !h[0].Deleted || !h[2].Deleted {
			t.Fatalf("history of eh2/ = %s, want both expiries", describe(h))
		}
	}},
	{"lifetime_create_over_expired", func(t *testing.T, e *Env) {
		for _, hist := range []bool{false, true} {
			s := e.Store
			if hist {
				s = e.historyStore(t)
			}
			path := "co/main/f.md"
			if hist {
				path = "co/hist/f.md"
			}
			lifetimeWrite(t, s, path, "old", e.Clock.Now().Add(time.Minute), false)
			e.Clock.Advance(2 * time.Minute)
			m, err := s.Delete(ctx(t), store.DeleteRequest{Path: path})
			if err != nil || m.Existed {
				t.Fatalf("delete expecting no file over an expired one: %+v, %v; want Existed false", m, err)
			}
			lifetimeWrite(t, s, path, "old", e.Clock.Now().Add(time.Minute), false)
			e.Clock.Advance(2 * time.Minute)
			if _, err := s.Write(ctx(t), store.WriteRequest{Path: path, Content: "new", Operation: op("co-"+path, "fp")}); err != nil {
				t.Fatalf("create over an expired file: %v", err)
			}
			f := read(t, s, path, 100)
			if f == nil || f.Content != "new" || !f.ExpiresAt.IsZero() {
				t.Fatalf("after the create: %+v", f)
			}
			if hist {
				h := history(t, s, path, 10)
				if len(h) != 5 || h[0].Deleted || !h[1].Deleted || h[1].Metadata[store.UpdatedByKey] != store.ExpiryUpdatedBy || !h[3].Deleted {
					t.Fatalf("history = %s, want the write, its expiry, the write, its expiry, the write, newest first", describe(h))
				}
			}
		}
	}},
	{"lifetime_expired_blocks_no_create", func(t *testing.T, e *Env) {
		// An expired file on a create's way, or below it, is no file: a
		// file and a folder may take its name at once.
		lifetimeWrite(t, e.Store, "cb/main/a.md", "soon a folder", e.Clock.Now().Add(time.Minute), false)
		lifetimeWrite(t, e.Store, "cb/main/f/x.md", "soon gone", e.Clock.Now().Add(time.Minute), false)
		e.Clock.Advance(2 * time.Minute)
		create(t, e.Store, "cb/main/a.md/b.md", "a folder now")
		create(t, e.Store, "cb/main/f", "a file now")
		eqSlice(t, "listing", list(t, e.Store, "cb/", 10), []string{"cb/main/a.md/b.md", "cb/main/f"})
		lifetimeWrite(t, e.Store, "cb/main/live.md", "live", e.Clock.Now().Add(time.Hour), false)
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "cb/main/live.md/x.md", Content: "x"})
		mustErr(t, err, store.ErrPathCollision, "a create below a file that has not expired")
	}},
	{"lifetime_append_keeps_and_restarts", func(t *testing.T, e *Env) {
		at := e.Clock.Now().Add(time.Hour)
		lifetimeWrite(t, e.Store, "ap/trip.md", "- one\n", at, false)
		lifetimeWrite(t, e.Store, "ap/pin.md", "- one\n", time.Time{}, true)
		for _, p := range []string{"ap/trip.md", "ap/pin.md"} {
			if _, err := e.Store.Append(ctx(t), store.AppendRequest{Path: p, Text: "- two", MaxChars: 1000, Metadata: map[string]string{"updated_by": "job"}}); err != nil {
				t.Fatalf("append %s: %v", p, err)
			}
		}
		trip, pin := read(t, e.Store, "ap/trip.md", 100), read(t, e.Store, "ap/pin.md", 100)
		if trip.Content != "- one\n- two\n" || !trip.ExpiresAt.Equal(at.Truncate(time.Millisecond)) || trip.Metadata["updated_by"] != "job" {
			t.Fatalf("appended expiring file = %+v, want its expiry kept", trip)
		}
		if !pin.Pinned {
			t.Fatalf("appended pinned file = %+v, want its pin kept", pin)
		}
		e.Clock.Advance(2 * time.Hour)
		if _, err := e.Store.Append(ctx(t), store.AppendRequest{Path: "ap/trip.md", Text: "- three", MaxChars: 1000, Operation: op("ap-3", "fp")}); err != nil {
			t.Fatalf("append to an expired file: %v", err)
		}
		trip = read(t, e.Store, "ap/trip.md", 100)
		if trip == nil || trip.Content != "- three\n" || !trip.ExpiresAt.IsZero() {
			t.Fatalf("append to an expired file = %+v, want a new file of the entry alone, never expiring", trip)
		}
	}},
	{"lifetime_write_states_it", func(t *testing.T, e *Env) {
		// A write states the whole row: what it leaves zero is cleared,
		// as its metadata is.
		v := lifetimeWrite(t, e.Store, "ws/a.md", "a", e.Clock.Now().Add(time.Hour), false)
		v2 := write(t, e.Store, "ws/a.md", "a2", v).Version
		if f := read(t, e.Store, "ws/a.md", 100); !f.ExpiresAt.IsZero() {
			t.Fatalf("a write naming no expiry kept %v", f.ExpiresAt)
		}
		if _, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "ws/a.md", Content: "a3", Expected: v2, Pinned: true}); err != nil {
			t.Fatal(err)
		}
		if f := read(t, e.Store, "ws/a.md", 100); !f.Pinned {
			t.Fatal("the pin was not stored")
		}
	}},
	{"lifetime_replay_answers_from_receipt", func(t *testing.T, e *Env) {
		// The longest operation id: over the primitives the version names
		// it, and the expiry's own operation must still fit its bound.
		o := op(strings.Repeat("r", store.MaxOperationIDChars), "fp")
		r := store.WriteRequest{Path: "rp/a.md", Content: "soon gone", Operation: o, ExpiresAt: e.Clock.Now().Add(time.Minute)}
		first, err := e.Store.Write(ctx(t), r)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(2 * time.Minute)
		again, err := e.Store.Write(ctx(t), r)
		if err != nil || !again.Replayed || again.Version != first.Version {
			t.Fatalf("replay after expiry = %+v, %v; want the receipt's result %+v", again, err, first)
		}
		if f := read(t, e.Store, "rp/a.md", 100); f != nil {
			t.Fatalf("the replay brought the expired file back: %+v", f)
		}
		if n, err := e.Store.PruneExpired(ctx(t)); err != nil || n < 1 {
			t.Fatalf("PruneExpired = %d, %v; want the expired file deleted", n, err)
		}
		if row, err := e.Driver.GetFile(ctx(t), "rp/a.md"); err != nil || (row != nil && !row.Tombstone) {
			t.Fatalf("after PruneExpired the row is %+v (%v)", row, err)
		}
	}},
	{"lifetime_clock_skew_cannot_resurrect", func(t *testing.T, e *Env) {
		// A process whose clock runs ahead expires the file; one whose
		// clock lags still sees it until then, but once the expiry is
		// recorded its compare-and-swap over the expired version fails.
		ahead := &Clock{}
		ahead.Advance(e.Clock.Now().Sub(time.Now()) + 10*time.Minute)
		o := e.Options()
		o.Now = ahead.Now
		fast := e.NewStore(t, o, nil)
		v := lifetimeWrite(t, e.Store, "sk/a.md", "a", e.Clock.Now().Add(5*time.Minute), false)
		if read(t, e.Store, "sk/a.md", 100) == nil {
			t.Fatal("the lagging store does not see the file before its expiry")
		}
		if n, err := fast.PruneExpired(ctx(t)); err != nil || n < 1 {
			t.Fatalf("PruneExpired on the fast clock = %d, %v", n, err)
		}
		if f := read(t, e.Store, "sk/a.md", 100); f != nil {
			t.Fatalf("the lagging store reads a file whose expiry was recorded: %+v", f)
		}
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "sk/a.md", Content: "back", Expected: v})
		mustErr(t, err, store.ErrConflict, "write over the expired version")
	}},
	{"lifetime_forget_erases_everything", func(t *testing.T, e *Env) {
		// Forget is not retention: pinned and expiring files go too.
		lifetimeWrite(t, e.Store, "fg/main/pin.md", "pinned", time.Time{}, true)
		lifetimeWrite(t, e.Store, "fg/main/trip.md", "expiring", e.Clock.Now().Add(time.Hour), false)
		lifetimeWrite(t, e.Store, "fg/main/gone.md", "expired", e.Clock.Now().Add(time.Minute), false)
		e.Clock.Advance(2 * time.Minute)
		if _, err := e.Store.Forget(ctx(t), "fg/", nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"fg/main/pin.md", "fg/main/trip.md", "fg/main/gone.md"} {
			if row, err := e.Driver.GetFile(ctx(t), p); err != nil || (row != nil && !row.Tombstone) {
				t.Fatalf("after Forget %s is %+v (%v)", p, row, err)
			}
		}
	}},
	{"lifetime_bad_input", func(t *testing.T, e *Env) {
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "bi/a.md", Content: "a", Metadata: map[string]string{driver.ExpiresKey: "2000-01-01T00:00:00.000Z"}})
		mustErr(t, err, store.ErrInvalidMetadata, "a store-owned key in metadata")
		_, err = e.Store.Write(ctx(t), store.WriteRequest{Path: "bi/a.md", Content: "a", Pinned: true, ExpiresAt: e.Clock.Now().Add(time.Hour)})
		mustErr(t, err, store.ErrInvalidLifetime, "pinned and expiring")
		if read(t, e.Store, "bi/a.md", 100) != nil {
			t.Fatal("a refused write wrote")
		}
	}},
}

// lifetimeWrite creates path with the given lifetime and returns its
// version.
func lifetimeWrite(t *testing.T, s *store.Store, path, content string, expires time.Time, pinned bool) string {
	t.Helper()
	m, err := s.Write(ctx(t), store.WriteRequest{Path: path, Content: content, ExpiresAt: expires, Pinned: pinned})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return m.Version
}

// checkLifetimes checks the lifetimes of listed entries against want,
// path by path (tombstones aside).
func checkLifetimes(t *testing.T, what string, entries []driver.Entry, want map[string]driver.Lifetime) {
	t.Helper()
	seen := 0
	for _, e := range entries {
		if e.Tombstone {
			continue
		}
		w, ok := want[e.Path]
		if !ok {
			continue
		}
		seen++
		if e.Lifetime != w {
			t.Errorf("%s: %s has lifetime %+v, want %+v", what, e.Path, e.Lifetime, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%s listed %d of the %d files", what, seen, len(want))
	}
}
