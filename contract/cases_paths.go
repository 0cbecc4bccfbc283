package contract

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// pathCases pin the promises about paths, prefixes and bounds that every
// backend must keep alike: the same request gets the same answer whatever
// the store runs on.
var pathCases = []Case{
	{"search_nonpositive_bounds", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		base := search.Request{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100}
		for name, mod := range map[string]func(*search.Request){
			"limit":      func(r *search.Request) { r.Limit = 0 },
			"max files":  func(r *search.Request) { r.MaxFiles = 0 },
			"max chars":  func(r *search.Request) { r.MaxChars = -1 },
			"file chars": func(r *search.Request) { r.MaxFileChars = 0 },
			"and query":  func(r *search.Request) { r.Limit, r.Query = -1, "" },
			"recency":    func(r *search.Request) { r.RecencyHalfLife = -time.Second },
		} {
			r := base
			mod(&r)
			_, err := e.Store.Search(ctx(t), r)
			mustErr(t, err, store.ErrInvalidBound, "search with "+name)
		}
	}},
	{"search_partial_name_prefix", func(t *testing.T, e *Env) {
		// Files that sort before the prefix in its folder must not use up
		// MaxFiles: the answer is the same on every backend and mode.
		for i := range 5 {
			create(t, e.Store, fmt.Sprintf("a%02d.md", i), "hay")
		}
		for _, p := range []string{"p05.md", "p05x.md", "p06.md", "p05/inner.md",
			"a/b/f01.md", "a/b/f02.md", "a/b/g.md", "a/b/f0/deep.md", "a/b/f0x/deep.md"} {
			create(t, e.Store, p, "needle")
		}
		for _, c := range []struct {
			prefix   string
			maxFiles int
			want     []string
			scanned  int
		}{
			{"", 10, []string{"p05.md", "p05x.md", "p06.md"}, 8},
			{"", 3, []string{"p05.md", "p05x.md", "p06.md"}, 8}, // the index covers the folder whole
			{"p05", 3, []string{"p05.md", "p05x.md"}, 2},
			{"p05.", 3, []string{"p05.md"}, 1},
			{"a/b/f0", 3, []string{"a/b/f01.md", "a/b/f02.md"}, 2},
			{"a/b/", 3, []string{"a/b/f01.md", "a/b/f02.md", "a/b/g.md"}, 3},
			{"a/b", 3, nil, 0},
			{"zz", 3, nil, 0},
		} {
			what := fmt.Sprintf("under %q with max_files %d", c.prefix, c.maxFiles)
			res := mustSearch(t, e.Store, search.Request{Prefix: c.prefix, Query: "needle", Limit: 10, MaxFiles: c.maxFiles, MaxChars: 1000, MaxFileChars: 100})
			eqSlice(t, "matches "+what, matchPaths(res), c.want)
			eq(t, "scanned "+what, res.Scanned, c.scanned)
			eq(t, "truncated "+what, res.Truncated, false)
		}
	}},
	{"reserved_segments", func(t *testing.T, e *Env) {
		for _, p := range []string{".agentmem", ".agentmem/lock", "x/.agentmem-tmp-1-a.md", ".agentmem-tmp-x/a.md",
			"a/.agentmem/b.md", "a/.agentmemory.md"} {
			_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: p, Content: "x"})
			mustErr(t, err, store.ErrInvalidPath, "write "+p)
			_, err = e.Store.Read(ctx(t), p, 10)
			mustErr(t, err, store.ErrInvalidPath, "read "+p)
			_, err = e.Store.Delete(ctx(t), store.DeleteRequest{Path: p})
			mustErr(t, err, store.ErrInvalidPath, "delete "+p)
			_, err = e.Store.ListPaths(ctx(t), p+"/", 10)
			mustErr(t, err, store.ErrInvalidPath, "list "+p)
		}
		create(t, e.Store, "a/agentmem.md", "a name that merely contains it is fine")
		create(t, e.Store, "a/x.agentmem-tmp-1", "so is one that does not start with it")
		eqSlice(t, "listed", list(t, e.Store, "", 10), []string{"a/agentmem.md", "a/x.agentmem-tmp-1"})
	}},
	{"file_folder_collisions", func(t *testing.T, e *Env) {
		// A file system cannot hold "p/x.md" and "p/x.md/y.md" at once, so
		// every backend refuses a create that would make a file and a
		// folder share a name with ErrPathCollision: nothing written, the
		// first file intact, listings unaffected, and the name free again
		// once the blocking file is gone. Updates and deletes never collide;
		// tombstones are not files.
		s := e.Store
		v := create(t, s, "p/x.md", "a file")
		create(t, s, "q/y/z.md", "a file in a folder")
		want := []string{"p/x.md", "q/y/z.md"}
		for _, p := range []string{"p/x.md/y.md", "p/x.md/deep/y.md", "q/y", "q"} {
			for _, o := range []*store.Operation{op("collide/"+p, "f"), nil} {
				_, err := s.Write(ctx(t), store.WriteRequest{Path: p, Content: "x", Operation: o})
				mustErr(t, err, store.ErrPathCollision, fmt.Sprintf("create %s (operation %v)", p, o != nil))
				if f := read(t, s, p, 10); f != nil {
					t.Fatalf("create %s was refused, then read = %+v", p, f)
				}
			}
		}
		eqSlice(t, "listed", list(t, s, "", 10), want)
		eqSlice(t, "listed under p/x.md/", list(t, s, "p/x.md/", 10), nil)
		eq(t, "first file intact", read(t, s, "p/x.md", 10).Content, "a file")
		// Updates and deletes of the blocking files never collide.
		v = write(t, s, "p/x.md", "still a file", v).Version
		// A retry of a refused operation applies once the blocker is gone.
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "p/x.md", Expected: v, Operation: op("unblock", "f")}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Write(ctx(t), store.WriteRequest{Path: "p/x.md/y.md", Content: "x", Operation: op("collide/p/x.md/y.md", "f")})
		if err != nil || m.Replayed {
			t.Fatalf("retry after the blocker was deleted = %+v, %v; want applied", m, err)
		}
		eq(t, "now a folder", read(t, s, "p/x.md/y.md", 10).Content, "x")
		m2, err := s.Write(ctx(t), store.WriteRequest{Path: "p/x.md/y.md", Content: "x", Operation: op("collide/p/x.md/y.md", "f")})
		if err != nil || !m2.Replayed || m2.Version != m.Version {
			t.Fatalf("replay = %+v, %v; want the original result %+v", m2, err, m)
		}
		// Now "p/x.md" is a folder, so the file of that name is refused.
		_, err = s.Write(ctx(t), store.WriteRequest{Path: "p/x.md", Content: "x"})
		mustErr(t, err, store.ErrPathCollision, "create p/x.md over its folder")
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "q/y/z.md", Expected: read(t, s, "q/y/z.md", 1).Version}); err != nil {
			t.Fatal(err)
		}
		create(t, s, "q/y", "now a file")
		eqSlice(t, "listed at the end", list(t, s, "", 10), []string{"p/x.md/y.md", "q/y"})
		// Tombstones (the evidence of deletes on the primitive path) are
		// not files: they block nothing.
		now := e.Clock.Now()
		for _, p := range []string{"t/a.md", "u/v/w.md"} {
			if err := e.Raw.CreateFile(ctx(t), driver.File{Path: p, Version: "tombstone-" + p, Tombstone: true, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		create(t, s, "t/a.md/b.md", "under a tombstone")
		create(t, s, "u/v", "over a tombstone's folder")
		// Names that merely share a string prefix never collide.
		create(t, s, "p/x", "x")
		create(t, s, "q/y.md", "y")
		create(t, s, "q/y-z/a.md", "a")
	}},
}
