package contract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
)

// persistCases are the persisted term index's contract (issue 36): a
// folder's index, written through the primitives as derived rows, is
// loaded by a new store instead of being built from the files; its rows
// are never files; a store's changes reach the next one; Forget erases
// them.
var persistCases = append(bothSearchModes(persistModeCases), Case{"index_requests_independent_of_files", func(t *testing.T, e *Env) {
	// Once a store has loaded a folder's persisted index, a BM25 search
	// makes as many backend requests for 20 files as for 80: it reads its
	// candidates, never the folder.
	per := map[int]int{}
	for _, n := range []int{20, 80} {
		p := fmt.Sprintf("rq%d/main/", n)
		for i := range n {
			create(t, e.Store, fmt.Sprintf("%sn%03d.md", p, i), fmt.Sprintf("note %d on the tide tables and the ferry", i))
		}
		create(t, e.Store, p+"needle.md", "the spare key is under the blue flowerpot")
		req := indexReq(search.BM25, p, "where is the spare key")
		req.MaxFiles = 10
		s := e.NewStore(t, e.Options(), nil)
		mustSearch(t, s, req)
		waitIndexed(t, s)
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		c := NewCounter(e.Driver)
		r := e.NewStore(t, e.Options(), func(driver.Driver) driver.Driver { return c })
		mustSearch(t, r, req) // loads the index
		waitIndexed(t, r)
		c.Reset()
		res := mustSearch(t, r, req)
		eqSlice(t, fmt.Sprintf("%d files: matches", n), matchPaths(res), []string{p + "needle.md"})
		per[n] = c.Total()
	}
	if per[20] != per[80] || per[80] > 2 {
		t.Fatalf("requests of a search once the index is loaded: %d for 20 files, %d for 80; want the same, at most 2", per[20], per[80])
	}
}})

var persistModeCases = []modeCase{
	{"index_persisted_for_a_new_store", func(t *testing.T, e *Env, m search.Mode) {
		const p = "persist/main/"
		const n = 24
		for i := range n {
			create(t, e.Store, fmt.Sprintf("%sn%02d.md", p, i), fmt.Sprintf("note %d on the tide tables and the ferry", i))
		}
		create(t, e.Store, p+"needle.md", "the spare key is under the blue flowerpot")
		req := func(q string) search.Request {
			r := indexReq(m, p, q)
			r.MaxFiles = 10 // below the folder's size: only an index answers without scanning
			return r
		}
		building := search.FallbackBuilding
		if m == search.Literal {
			building = search.FallbackLiteral
		}
		s := e.NewStore(t, e.Options(), nil)
		eq(t, "first search ever: fallback", mustSearch(t, s, req("flowerpot")).Fallback, building)
		waitIndexed(t, s) // built, then written
		replace(t, s, p+"n03.md", "a heron fishes below the weir")
		if err := s.Close(); err != nil { // writes the change it has not written yet
			t.Fatalf("close: %v", err)
		}

		r := e.NewStore(t, e.Options(), nil)
		res := mustSearch(t, r, req("where is the spare key"))
		eq(t, "a new store's first search: fallback", res.Fallback, indexedFallback(m))
		if m == search.BM25 {
			eqSlice(t, "a new store's first search", matchPaths(res), []string{p + "needle.md"})
			eq(t, "a new store's first search: scanned", res.Scanned, n+1)
			eqSlice(t, "the change written at close", matchPaths(mustSearch(t, r, req("heron weir"))), []string{p + "n03.md"})
		}
		// The rows are the store's, never files.
		for q, err := range r.Walk(ctx(t), "persist/", 0) {
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if strings.Contains(q, search.TermSegment) {
				t.Fatalf("walk yielded the index row %s", q)
			}
		}
		if m == search.BM25 && len(termRows(t, e.Driver, "persist/")) == 0 {
			t.Fatal("no row of the persisted index")
		}
		if _, err := r.Forget(ctx(t), "persist/", nil); err != nil {
			t.Fatalf("forget: %v", err)
		}
		if rows := termRows(t, e.Driver, "persist/"); len(rows) > 0 {
			t.Fatalf("rows of the persisted index left after forget: %v", rows)
		}
		res = mustSearch(t, e.NewStore(t, e.Options(), nil), req("spare key"))
		eq(t, "after forget: matches", len(res.Matches), 0)
		eq(t, "after forget: scanned", res.Scanned, 0)
	}},
}

// termRows lists the rows of persisted term indexes under prefix, through
// the driver.
func termRows(t *testing.T, d driver.Driver, prefix string) []string {
	t.Helper()
	var out []string
	after := ""
	for {
		entries, err := d.ListFiles(ctx(t), driver.ListParams{Prefix: prefix, After: after, Limit: 500})
		if err != nil {
			t.Fatalf("ListFiles: %v", err)
		}
		for _, en := range entries {
			after = en.Path
			if !en.Tombstone && strings.Contains(en.Path, "/"+search.TermSegment+"/") {
				out = append(out, en.Path)
			}
		}
		if len(entries) < 500 {
			return out
		}
	}
}
