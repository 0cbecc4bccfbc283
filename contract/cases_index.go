package contract

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// indexCases are the term index's contract (issue 36), in both search
// modes (literal always scans, so it is the reference the BM25 index must
// agree with): a search is fresh after every kind of change made through
// the store, repaired after changes made behind its back, blind to other
// folders, empty after Forget, within its bounds, and says when it
// scanned.
var indexCases = bothSearchModes(indexModeCases)

var indexModeCases = []modeCase{
	{"index_fresh_after_write", func(t *testing.T, e *Env, m search.Mode) {
		s, g := gatedStore(t, e, nil)
		const p = "fw/main/"
		checkFresh(t, e, m, s, g, p, func() {
			create(t, s, p+"f.md", "a falcon hunts over the estuary")
			replace(t, s, p+"b.md", "an osprey follows the ferry")
			create(t, s, p+"sub/g.md", "a falcon in a nested folder")
		},
			freshCheck{"falcon", []string{"f.md"}},
			freshCheck{"osprey", []string{"b.md"}},
			freshCheck{"gulls", nil},
			freshCheck{"ferry", []string{"b.md"}},
			freshCheck{"heron", []string{"a.md", "d.md"}},
		)
	}},
	{"index_fresh_after_delete", func(t *testing.T, e *Env, m search.Mode) {
		s, g := gatedStore(t, e, nil)
		const p = "fd/main/"
		checkFresh(t, e, m, s, g, p, func() {
			remove(t, s, p+"d.md")
			remove(t, s, p+"b.md")
			remove(t, s, p+"e.md") // no search reads it again: only the change feed says it is gone
		},
			freshCheck{"heron", []string{"a.md"}},
			freshCheck{"gulls", nil},
			freshCheck{"egret", nil},
			freshCheck{"harbour", []string{"c.md"}},
		)
		eq(t, "scanned after the deletes", mustSearch(t, s, indexReq(m, p, "heron")).Scanned, 2)
	}},
	{"index_fresh_after_append", func(t *testing.T, e *Env, m search.Mode) {
		s, g := gatedStore(t, e, nil)
		const p = "fa/main/"
		appendLine := func(path, text string) {
			if _, err := s.Append(ctx(t), store.AppendRequest{Path: path, Text: text, MaxChars: 10000}); err != nil {
				t.Fatalf("append %s: %v", path, err)
			}
		}
		checkFresh(t, e, m, s, g, p, func() {
			appendLine(p+"c.md", "a kingfisher dives")
			appendLine(p+"new.md", "a cormorant dries its wings")
		},
			freshCheck{"kingfisher", []string{"c.md"}},
			freshCheck{"cormorant", []string{"new.md"}},
			freshCheck{"harbour", []string{"c.md"}},
		)
	}},
	{"index_fresh_after_restore", func(t *testing.T, e *Env, m search.Mode) {
		s, g := gatedStore(t, e, e.historyOptions(0))
		const p = "fr/main/"
		var v1 string
		checkFresh(t, e, m, s, g, p, func() {
			v1 = read(t, s, p+"a.md", 1).Version
			replace(t, s, p+"a.md", "a falcon over the dunes")
			vd := read(t, s, p+"d.md", 1).Version
			remove(t, s, p+"d.md")
			if _, err := s.Restore(ctx(t), store.RestoreRequest{Path: p + "d.md", Version: vd}); err != nil {
				t.Fatalf("restore d.md: %v", err)
			}
		},
			freshCheck{"falcon", []string{"a.md"}},
			freshCheck{"egret", []string{"d.md"}},
			freshCheck{"heron", []string{"d.md"}},
		)
		// Restore a.md's first version: its words are back, the falcon gone.
		g.hold()
		if _, err := s.Restore(ctx(t), store.RestoreRequest{Path: p + "a.md", Version: v1, Expected: read(t, s, p+"a.md", 1).Version}); err != nil {
			t.Fatalf("restore a.md: %v", err)
		}
		expectFound(t, s, m, p, "falcon")
		expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md")
		g.release()
		waitIndexed(t, s)
		sameAsFresh(t, e, s, indexReq(m, p, "heron falcon"))
	}},
	{"index_fresh_after_import", func(t *testing.T, e *Env, m search.Mode) {
		const p = "fi/main/"
		src := sourceStore(t, e, map[string]string{
			p + "a.md":   "a falcon over the dunes",
			p + "new.md": "a plover on the sand",
			p + "e.md":   "ropes and sails",
		})
		var buf bytes.Buffer
		if _, err := archive.Export(ctx(t), src, p, &buf, nil); err != nil {
			t.Fatalf("export: %v", err)
		}
		s, g := gatedStore(t, e, nil)
		checkFresh(t, e, m, s, g, p, func() {
			st, err := archive.Import(ctx(t), s, &buf, &archive.ImportOptions{Force: true})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if st.Created != 1 || st.Replaced != 1 {
				t.Fatalf("import = %+v, want 1 created, 1 replaced", st)
			}
		},
			freshCheck{"falcon", []string{"a.md"}},
			freshCheck{"plover", []string{"new.md"}},
			freshCheck{"heron", []string{"d.md"}},
		)
	}},
	{"index_fresh_after_migrate", func(t *testing.T, e *Env, m search.Mode) {
		const p = "fm/main/"
		src := sourceStore(t, e, map[string]string{
			p + "b.md":   "an osprey follows the ferry",
			p + "new.md": "a plover on the sand",
		})
		s, g := gatedStore(t, e, nil)
		checkFresh(t, e, m, s, g, p, func() { copyStore(t, src, s, "fm/") },
			freshCheck{"osprey", []string{"b.md"}},
			freshCheck{"plover", []string{"new.md"}},
			freshCheck{"gulls", nil},
		)
	}},
	{"index_repaired_after_external_change", func(t *testing.T, e *Env, m search.Mode) {
		// Files created, replaced and deleted through the driver, behind
		// the store's back (another process, a hand edit).
		s := e.NewStore(t, e.Options(), nil)
		const p = "ext/main/"
		seedFolder(t, s, p, shore)
		expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md")
		expectFound(t, s, m, p, "gulls", p+"b.md")
		rawCreate(t, e.Driver, p+"x.md", "an osprey on the post", "ext-1")
		if err := e.Driver.ReplaceFile(ctx(t), driver.File{Path: p + "a.md", Content: "a falcon over the dunes", Version: "ext-2"}, read(t, s, p+"a.md", 1).Version); err != nil {
			t.Fatalf("ReplaceFile: %v", err)
		}
		if err := e.Driver.DeleteFile(ctx(t), p+"d.md", read(t, s, p+"d.md", 1).Version); err != nil {
			t.Fatalf("DeleteFile: %v", err)
		}
		// Never a snippet of content that is gone.
		expectFound(t, s, m, p, "heron")
		expectFound(t, s, m, p, "egret")
		// The files read at another version are looked at again.
		waitIndexed(t, s)
		expectFound(t, s, m, p, "falcon", p+"a.md")
		// A new store over the same data (after a crash between a file
		// and its index, say) builds its index from the store.
		r := e.Reopen(t)
		t.Cleanup(func() { _ = r.Close() })
		for q, want := range map[string][]string{"osprey": {p + "x.md"}, "falcon": {p + "a.md"}, "heron": nil, "gulls": {p + "b.md"}} {
			expectFound(t, r, m, p, q, want...)
		}
		eq(t, "scanned by a new store", mustSearch(t, r, indexReq(m, p, "osprey")).Scanned, 5)
		// Reindex drops the index; the next search builds it from the store.
		reindex(t, s, p)
		expectFound(t, s, m, p, "osprey", p+"x.md")
		for _, q := range []string{"osprey", "falcon heron", "gulls egret"} {
			sameAsFresh(t, e, s, indexReq(m, p, q))
		}
		eq(t, "scanned after Reindex", mustSearch(t, s, indexReq(m, p, "osprey")).Scanned, 5)
	}},
	{"index_crash_between_file_and_index", func(t *testing.T, e *Env, m search.Mode) {
		// A change that lands while its reply is lost: the store cannot
		// tell, so its index looks at the file again.
		d, arm := lostReply(e.Driver)
		s := e.NewStore(t, e.Options(), func(driver.Driver) driver.Driver { return d })
		const p = "crash/main/"
		seedFolder(t, s, p, shore)
		expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md")
		arm()
		_, err := s.Write(ctx(t), store.WriteRequest{Path: p + "a.md", Content: "a falcon over the dunes", Expected: read(t, s, p+"a.md", 1).Version})
		if err == nil {
			t.Fatal("the write whose reply was lost succeeded")
		}
		if f := read(t, e.Store, p+"a.md", 100); f == nil || !strings.Contains(f.Content, "falcon") {
			t.Fatalf("the write did not land: %+v", f)
		}
		expectFound(t, s, m, p, "falcon", p+"a.md")
		expectFound(t, s, m, p, "heron", p+"d.md")
		waitIndexed(t, s)
		expectFound(t, s, m, p, "falcon", p+"a.md")
		sameAsFresh(t, e, s, indexReq(m, p, "falcon heron"))
		// A process that died between a file and its index: a new one
		// builds its index from the store.
		rawCreate(t, e.Driver, p+"x.md", "an osprey on the post", "crash-1")
		r := e.Reopen(t)
		t.Cleanup(func() { _ = r.Close() })
		expectFound(t, r, m, p, "osprey", p+"x.md")
		expectFound(t, r, m, p, "falcon heron", p+"a.md", p+"d.md")
	}},
	{"index_tenant_boundary", func(t *testing.T, e *Env, m search.Mode) {
		// One folder's index never ranks, counts or shows another's
		// files: not another tenant's, not a nested folder's, not a
		// sibling whose name starts the same.
		s := e.NewStore(t, e.Options(), nil)
		const a, b = "tenant-a/main/", "tenant-b/main/"
		seedFolder(t, s, a, map[string]string{
			"alpha.md":  "alpha alpha beta",
			"albatross": "beta gamma",
			"other.md":  "alpha delta epsilon delta",
			"plain.md":  "unrelated words only",
		})
		reqs := []search.Request{indexReq(m, a, "alpha beta"), indexReq(m, a, "delta gamma"), indexReq(m, a+"al", "alpha beta")}
		var before []search.Result
		for _, r := range reqs {
			before = append(before, mustSearch(t, s, r))
		}
		eq(t, "scanned", before[0].Scanned, 4)
		eq(t, "scanned under a partial name", before[2].Scanned, 2)
		mustSearch(t, s, indexReq(m, b, "alpha")) // tenant-b's folder has an index too
		for i := range 60 {
			create(t, s, fmt.Sprintf("%salpha-%02d.md", b, i), strings.Repeat("alpha beta ", i%5+1)+fmt.Sprintf("gamma %d", i))
		}
		for _, extra := range []string{a + "sub/alpha.md", "tenant-a/main-x/alpha.md", "tenant-a/mainalpha.md", "tenant-a/alpha.md"} {
			create(t, s, extra, "alpha beta gamma delta")
		}
		check := func(who string, st *store.Store) {
			t.Helper()
			for i, r := range reqs {
				res := mustSearch(t, st, r)
				sameResult(t, fmt.Sprintf("%s: %q under %q, with tenant-b's files vs without", who, r.Query, r.Prefix), res, before[i])
				for _, mt := range res.Matches {
					if rest, ok := strings.CutPrefix(mt.Path, r.Prefix); !ok || strings.Contains(rest, "/") {
						t.Fatalf("%s: search under %q matched %s", who, r.Prefix, mt.Path)
					}
				}
			}
		}
		waitIndexed(t, s) // Scanned while changes are queued: index_scanned_counts_queued_changes
		check("the store that indexed both", s)
		check("a new store", e.NewStore(t, e.Options(), nil))
		res := mustSearch(t, s, indexReq(m, b, "alpha"))
		eq(t, "tenant-b's scanned", res.Scanned, 60)
		for _, mt := range res.Matches {
			if !strings.HasPrefix(mt.Path, b) {
				t.Fatalf("tenant-b's search matched %s", mt.Path)
			}
		}
	}},
	{"index_scanned_counts_queued_changes", func(t *testing.T, e *Env, m search.Mode) {
		// A search reads the files changed and not yet indexed, so it
		// covers them: Scanned counts a file created at once, and no
		// longer one deleted.
		s, g := gatedStore(t, e, nil)
		const p = "sq/main/"
		seedFolder(t, s, p, shore)
		eq(t, "scanned", mustSearch(t, s, indexReq(m, p, "heron")).Scanned, 5)
		g.hold()
		create(t, s, p+"f.md", "a falcon hunts the heron")
		create(t, s, p+"g.md", "a plover on the sand")
		eq(t, "scanned, two files created and queued", expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md", p+"f.md").Scanned, 7)
		for _, n := range []string{"b.md", "c.md", "e.md"} {
			remove(t, s, p+n)
		}
		eq(t, "scanned, three files deleted and queued", expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md", p+"f.md").Scanned, 4)
		g.release()
		waitIndexed(t, s)
		eq(t, "scanned, applied", expectFound(t, s, m, p, "heron", p+"a.md", p+"d.md", p+"f.md").Scanned, 4)
	}},
	{"index_forget_erases", func(t *testing.T, e *Env, m search.Mode) {
		s, g := gatedStore(t, e, nil)
		const a, b = "tenant-a/main/", "tenant-b/main/"
		seedFolder(t, s, a, shore)
		seedFolder(t, s, b, map[string]string{"a.md": "heron at the weir", "b.md": "gulls and a heron"})
		expectFound(t, s, m, a, "heron", a+"a.md", a+"d.md")
		bBefore := expectFound(t, s, m, b, "heron", b+"a.md", b+"b.md")
		// While the deletes are only queued, the forgotten folder's index
		// is gone all the same.
		g.hold()
		if _, err := s.Forget(ctx(t), "tenant-a/", nil); err != nil {
			t.Fatalf("forget: %v", err)
		}
		for _, q := range []string{"heron", "gulls ferry", "harbour", "ropes sails egret"} {
			res := expectFound(t, s, m, a, q)
			eq(t, "scanned after forget", res.Scanned, 0)
			eq(t, "truncated after forget", res.Truncated, false)
		}
		sameResult(t, "tenant-b after tenant-a's forget", mustSearch(t, s, indexReq(m, b, "heron")), bBefore)
		create(t, s, a+"one.md", "a heron again")
		res := expectFound(t, s, m, a, "heron gulls egret", a+"one.md")
		eq(t, "scanned after re-creating one file", res.Scanned, 1)
		g.release()
		waitIndexed(t, s)
		sameAsFresh(t, e, s, indexReq(m, a, "heron gulls egret"))
	}},
	{"index_bounds", func(t *testing.T, e *Env, m search.Mode) {
		// Results within Limit and MaxChars, Scanned the folder's files,
		// Truncated only when something was cut.
		s := e.NewStore(t, e.Options(), nil)
		const p = "bounds/main/"
		for i := range 30 {
			create(t, s, fmt.Sprintf("%sn%02d.md", p, i), strings.Repeat("filler words here ", i%7)+"a needle in the hay "+strings.Repeat("more filler ", i%5))
		}
		create(t, s, p+"plain.md", "nothing to find")
		create(t, s, p+"other.md", "nothing here either")
		create(t, s, p+"sub/n.md", "a needle in a nested folder")
		mustSearch(t, s, indexReq(m, p, "needle"))
		waitIndexed(t, s) // Scanned while changes are queued: index_scanned_counts_queued_changes
		for _, r := range []struct{ limit, maxChars int }{{1, 10}, {3, 200}, {5, 60}, {10, 1000}, {29, 100000}, {30, 100000}, {50, 100000}} {
			req := indexReq(m, p, "needle")
			req.Limit, req.MaxChars = r.limit, r.maxChars
			res := mustSearch(t, s, req)
			what := fmt.Sprintf("limit %d, max_chars %d", r.limit, r.maxChars)
			if len(res.Matches) > r.limit || len(res.Matches) == 0 {
				t.Fatalf("%s: %d matches", what, len(res.Matches))
			}
			if n := budgetUsed(p, res); n > r.maxChars {
				t.Fatalf("%s: %d runes of names and snippets", what, n)
			}
			eq(t, what+": scanned", res.Scanned, 32)
			eq(t, what+": truncated", res.Truncated, len(res.Matches) < 30)
			eq(t, what+": fallback", res.Fallback, indexedFallback(m))
			snippetsCurrent(t, s, res)
		}
		// A file cut by MaxFileChars is said so.
		create(t, s, p+"long.md", "needle "+strings.Repeat("long filler text ", 100))
		waitIndexed(t, s)
		req := indexReq(m, p, "needle")
		req.Limit, req.MaxFileChars = 50, 500
		res := mustSearch(t, s, req)
		eq(t, "a file cut: truncated", res.Truncated, true)
		eq(t, "a file cut: scanned", res.Scanned, 33)
		// MaxFiles below the folder's size: literal scans MaxFiles files;
		// the built index covers the whole folder and reads at most
		// MaxFiles.
		req = indexReq(m, p, "needle")
		req.MaxFiles = 10
		res = mustSearch(t, s, req)
		if len(res.Matches) > 10 {
			t.Fatalf("max_files 10: %d matches", len(res.Matches))
		}
		eq(t, "max_files 10: truncated", res.Truncated, true)
		if m == search.Literal {
			eq(t, "max_files 10: scanned", res.Scanned, 10)
		} else {
			eq(t, "max_files 10: scanned", res.Scanned, 33)
		}
	}},
	{"index_fallback_says_so", func(t *testing.T, e *Env, m search.Mode) {
		// A folder larger than MaxFiles: its first search on a new store
		// scans and says so; one of MaxFiles files does not.
		const big, small = "fb/big/", "fb/small/"
		for i := range 12 {
			create(t, e.Store, fmt.Sprintf("%sn%02d.md", big, i), fmt.Sprintf("note %d on the tide", i))
			if i < 11 {
				create(t, e.Store, fmt.Sprintf("%sn%02d.md", small, i), fmt.Sprintf("note %d on the tide", i))
			}
		}
		req := func(prefix string) search.Request {
			r := indexReq(m, prefix, "tide")
			r.MaxFiles = 11
			return r
		}
		building := search.FallbackBuilding
		if m == search.Literal {
			building = search.FallbackLiteral
		}
		s := e.NewStore(t, e.Options(), nil)
		res := mustSearch(t, s, req(big))
		eq(t, "big folder, first search: fallback", res.Fallback, building)
		eq(t, "big folder, first search: truncated", res.Truncated, true)
		eq(t, "big folder, first search: scanned", res.Scanned, 11)
		res = mustSearch(t, s, req(small))
		eq(t, "small folder, first search: fallback", res.Fallback, indexedFallback(m))
		eq(t, "small folder, first search: truncated", res.Truncated, false)
		eq(t, "small folder, first search: scanned", res.Scanned, 11)
		waitIndexed(t, s)
		res = mustSearch(t, s, req(big))
		eq(t, "big folder, once built: fallback", res.Fallback, indexedFallback(m))
		if m == search.BM25 {
			// The index covers the folder, and reads at most MaxFiles of
			// the files it ranks: a match left out is said so.
			eq(t, "big folder, once built: scanned", res.Scanned, 12)
			eq(t, "big folder, once built: matches left out, truncated", res.Truncated, len(res.Matches) < 12)
		}
		// Dropped (Reindex), the big folder's index is built again: the
		// next search scans and says so again.
		reindex(t, s, "fb/")
		res = mustSearch(t, s, req(big))
		eq(t, "big folder after Reindex: fallback", res.Fallback, building)
		eq(t, "big folder after Reindex: truncated", res.Truncated, true)
		res = mustSearch(t, s, req(small))
		eq(t, "small folder after Reindex: fallback", res.Fallback, indexedFallback(m))
	}},
}
