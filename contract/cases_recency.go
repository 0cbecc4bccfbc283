package contract

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
)

// recencyCases pin search.Request.RecencyHalfLife on every backend: it
// reorders matches, never changes which files match, and the write times
// it weighs come from the rows the search reads (a native scope read
// returns each file's version).
var recencyCases = append(bothSearchModes([]modeCase{{"search_recency_reorders_only", func(t *testing.T, e *Env, m search.Mode) {
	const p = "r/main/"
	// Two notes alike in every word, the one sorted first by path
	// written a month before the other, and a much stronger old match.
	old := create(t, e.Store, p+"a-old.md", "- The heron nests by the river.\n")
	create(t, e.Store, p+"strong.md", "- Heron, heron, heron: the river heron again.\n")
	create(t, e.Store, p+"zz.md", "- Nothing about birds.\n")
	// Versions increase across the process (other cases move their
	// clocks on): the clock goes to a month after a-old.md's version.
	at, ok := search.VersionTime(old)
	if !ok {
		t.Fatalf("version %q has no time", old)
	}
	e.Clock.Advance(at.Sub(e.Clock.Now()) + 30*24*time.Hour)
	create(t, e.Store, p+"b-new.md", "- The heron nests by the river.\n")
	r := search.Request{Prefix: p, Query: "heron river", Mode: m, Limit: 10, MaxFiles: 10, MaxChars: 2000, MaxFileChars: 1000}
	off := matchPaths(mustSearch(t, e.Store, r))
	r.RecencyHalfLife = 7 * 24 * time.Hour
	on := matchPaths(mustSearch(t, e.Store, r))
	eqSlice(t, "matches without recency", off, []string{p + "strong.md", p + "a-old.md", p + "b-new.md"})
	eqSlice(t, "matches with recency", on, []string{p + "strong.md", p + "b-new.md", p + "a-old.md"})
}}}), Case{"scope_read_versions", func(t *testing.T, e *Env) {
	// A native scope read returns each whole file's version, as GetFile
	// does: what search weighs recency by, with no read more.
	sr, ok := e.Driver.(driver.ScopeReader)
	if !ok || !driver.CapabilitiesOf(e.Driver).ScopeRead {
		return // no native scope read: the store reads the rows themselves
	}
	for _, p := range []string{"v/a.md", "v/b.md"} {
		create(t, e.Store, p, "versioned")
	}
	write(t, e.Store, "v/a.md", "versioned again", read(t, e.Store, "v/a.md", 100).Version)
	got, err := sr.ReadScope(ctx(t), driver.ScopeParams{Prefix: "v/", Limit: 10, MaxChars: 100})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
		row, err := e.Driver.GetFile(ctx(t), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "ReadScope version of "+f.Path, f.Version, row.Version)
	}
	eqSlice(t, "ReadScope paths", paths, []string{"v/a.md", "v/b.md"})
}})
