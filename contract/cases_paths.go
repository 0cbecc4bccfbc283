package contract

import (
	"fmt"
	"sort"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// pathCases pin the promises about paths, prefixes and bounds that every
// backend must keep alike: the same request gets the same answer whatever
// the store runs on.
var pathCases = []Case{
	{"search_nonpositive_bounds", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		base := store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100}
		for name, mod := range map[string]func(*store.SearchRequest){
			"limit":      func(r *store.SearchRequest) { r.Limit = 0 },
			"max files":  func(r *store.SearchRequest) { r.MaxFiles = 0 },
			"max chars":  func(r *store.SearchRequest) { r.MaxChars = -1 },
			"file chars": func(r *store.SearchRequest) { r.MaxFileChars = 0 },
			"and query":  func(r *store.SearchRequest) { r.Limit, r.Query = -1, "" },
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
			{"", 3, nil, 3}, // a00–a02, then truncated
			{"p05", 3, []string{"p05.md", "p05x.md"}, 2},
			{"p05.", 3, []string{"p05.md"}, 1},
			{"a/b/f0", 3, []string{"a/b/f01.md", "a/b/f02.md"}, 2},
			{"a/b/", 3, []string{"a/b/f01.md", "a/b/f02.md", "a/b/g.md"}, 3},
			{"a/b", 3, nil, 0},
			{"zz", 3, nil, 0},
		} {
			what := fmt.Sprintf("under %q with max_files %d", c.prefix, c.maxFiles)
			res := search(t, e.Store, store.SearchRequest{Prefix: c.prefix, Query: "needle", Limit: 10, MaxFiles: c.maxFiles, MaxChars: 1000, MaxFileChars: 100})
			eqSlice(t, "matches "+what, matchPaths(res), c.want)
			eq(t, "scanned "+what, res.Scanned, c.scanned)
			eq(t, "truncated "+what, res.Truncated, c.prefix == "" && c.maxFiles == 3)
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
		// a file store refuses the second with ErrPathCollision; database
		// backends hold both. Either way: that sentinel or success, nothing
		// half-written, the first file intact, reads and listings never
		// fail, and the name is free again once the file is gone.
		s := e.Store
		v := create(t, s, "p/x.md", "a file")
		create(t, s, "q/y/z.md", "a file in a folder")
		want := []string{"p/x.md", "q/y/z.md"}
		for _, p := range []string{"p/x.md/y.md", "p/x.md/deep/y.md", "q/y", "q"} {
			for _, o := range []*store.Operation{op("collide/"+p, "f"), nil} {
				_, err := s.Write(ctx(t), store.WriteRequest{Path: p, Content: "x", Operation: o})
				if err != nil {
					mustErr(t, err, store.ErrPathCollision, "write "+p)
				}
				f := read(t, s, p, 10)
				if (err == nil) != (f != nil) || f != nil && f.Content != "x" {
					t.Fatalf("write %s = %v, then read = %+v", p, err, f)
				}
				if err == nil {
					want = append(want, p)
					break
				}
			}
		}
		sort.Strings(want)
		eqSlice(t, "listed", list(t, s, "", 10), want)
		eq(t, "first file intact", read(t, s, "p/x.md", 10).Content, "a file")
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "p/x.md", Expected: v}); err != nil {
			t.Fatal(err)
		}
		if read(t, s, "p/x.md/y.md", 10) == nil {
			create(t, s, "p/x.md/y.md", "now a folder")
		}
		// Names that merely share a string prefix never collide.
		create(t, s, "p/x", "x")
		create(t, s, "q/y.md", "y")
		create(t, s, "q/y-z/a.md", "a")
	}},
}
