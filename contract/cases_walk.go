package contract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// walk collects every path Store.Walk yields for prefix with pageSize,
// failing t on an error.
func walk(t *testing.T, s *store.Store, prefix string, pageSize int) []string {
	t.Helper()
	var out []string
	for p, err := range s.Walk(ctx(t), prefix, pageSize) {
		if err != nil {
			t.Fatalf("walk %q (page %d): %v", prefix, pageSize, err)
		}
		out = append(out, p)
	}
	return out
}

// walkFiles are the files of the walk cases: nested folders under "a/",
// its neighbours "a.md", "ab/…" and "a-b/…" (which sort around "a/"), and
// another top-level folder.
var walkFiles = []string{
	"a.md", "a-b/x.md", "a/0.md", "a/MEMORY.md", "a/b/1.md", "a/b/c/2.md", "a/b/c/3.md",
	"a/b/c/d/4.md", "a/b/z.md", "a/e/5.md", "a/e/6.md", "a/f.md", "a/g/7.md", "a/z.md",
	"ab/8.md", "ab/c/9.md", "b/q.md", "z/last.md",
}

// under returns the walkFiles that start with prefix, sorted.
func under(prefix string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// seedWalk creates walkFiles, then creates and deletes gone (a tombstone
// on the primitive path), which no listing may show.
func seedWalk(t *testing.T, s *store.Store, gone string) {
	t.Helper()
	for _, p := range walkFiles {
		create(t, s, p, "content of "+p)
	}
	v := create(t, s, gone, "gone")
	if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: gone, Expected: v}); err != nil {
		t.Fatal(err)
	}
}

var walkCases = []Case{
	{"walk_every_path_across_pages", func(t *testing.T, e *Env) {
		s := e.Store
		for _, p := range walkFiles {
			create(t, s, p, "content of "+p)
		}
		// A deleted file (a tombstone on the primitive path) and an
		// operation's receipt must never be walked.
		v := create(t, s, "a/deleted.md", "gone")
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "a/deleted.md", Expected: v, Operation: op("walk-del", "fp")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx(t), store.WriteRequest{Path: "a/f.md", Content: "again", Expected: read(t, s, "a/f.md", 1).Version, Operation: op("walk-write", "fp")}); err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"a/", "a", "ab/", "a/b/", "a/b/c/d/4.md", "", "nothing/"} {
			want := under(prefix, walkFiles)
			for _, page := range []int{1, 2, 3, 5, 0, store.MaxWalkPageSize + 1} {
				eqSlice(t, fmt.Sprintf("walk %q page %d", prefix, page), walk(t, s, prefix, page), want)
			}
		}
		// Walk agrees with ListPaths.
		eqSlice(t, "walk vs list", walk(t, s, "a/", 4), list(t, s, "a/", 1000))
	}},
	{"walk_survives_changes_during_the_walk", func(t *testing.T, e *Env) {
		s := e.Store
		var files []string
		for i := range 12 {
			files = append(files, fmt.Sprintf("w/%c/%02d.md", 'a'+i/4, i))
		}
		versions := map[string]string{}
		for _, p := range files {
			versions[p] = create(t, s, p, "x")
		}
		// Pages of 3: [0 1 2] [3 4 5] [6 7 8] [9 10 11]. While the second
		// page is being yielded, delete a path already yielded and one in
		// the last page, and create one past the end.
		var got []string
		for p, err := range s.Walk(ctx(t), "w/", 3) {
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if len(got) > 0 && p <= got[len(got)-1] {
				t.Fatalf("walk yielded %q after %q", p, got[len(got)-1])
			}
			got = append(got, p)
			if p == files[3] {
				for _, d := range []string{files[1], files[9]} {
					if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: d, Expected: versions[d]}); err != nil {
						t.Fatal(err)
					}
				}
				create(t, s, "w/z/new.md", "x")
			}
		}
		want := slices.Concat(files[:9], files[10:], []string{"w/z/new.md"})
		eqSlice(t, "walk during changes", got, want)
	}},
	{"walk_stops_errors_and_cancels", func(t *testing.T, e *Env) {
		s := e.Store
		for i := range 5 {
			create(t, s, fmt.Sprintf("c/%d.md", i), "x")
		}
		for _, bad := range []struct {
			prefix string
			page   int
			want   error
		}{{"c/../x", 0, store.ErrInvalidPath}, {"c/", -1, store.ErrInvalidBound}} {
			n := 0
			for p, err := range s.Walk(ctx(t), bad.prefix, bad.page) {
				n++
				if p != "" || !errors.Is(err, bad.want) {
					t.Fatalf("walk %q page %d = %q, %v, want %v", bad.prefix, bad.page, p, err, bad.want)
				}
			}
			eq(t, "values yielded for a bad walk", n, 1)
		}
		// Breaking out of the loop ends the walk quietly.
		var first []string
		for p, err := range s.Walk(ctx(t), "c/", 2) {
			if err != nil {
				t.Fatal(err)
			}
			if first = append(first, p); len(first) == 3 {
				break
			}
		}
		eqSlice(t, "first three", first, []string{"c/0.md", "c/1.md", "c/2.md"})
		// A canceled context ends the walk with its error before the next
		// page.
		c, cancel := context.WithCancel(ctx(t))
		defer cancel()
		var seen []string
		var last error
		for p, err := range s.Walk(c, "c/", 2) {
			if err != nil {
				last = err
				continue
			}
			seen = append(seen, p)
			cancel()
		}
		if !errors.Is(last, context.Canceled) || len(seen) > 2 {
			t.Fatalf("canceled walk: saw %q, ended with %v; want at most one page and context.Canceled", seen, last)
		}
	}},
	{"list_and_walk_after_a_path", func(t *testing.T, e *Env) {
		s := e.Store
		seedWalk(t, s, "a/b/gone.md")
		for _, prefix := range []string{"", "a/", "a/b/"} {
			want := under(prefix, walkFiles)
			// Paged with After, a listing is the whole listing, whatever
			// the page; a walk after any path is the rest of it.
			for _, limit := range []int{1, 3, 100} {
				var got []string
				for after := ""; ; {
					page, err := s.ListPaths(ctx(t), prefix, limit, store.ListOptions{After: after})
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, page...)
					if len(page) < limit {
						break
					}
					after = page[len(page)-1]
				}
				eqSlice(t, fmt.Sprintf("list %q paged by %d", prefix, limit), got, want)
			}
			for i, after := range want {
				var got []string
				for p, err := range s.Walk(ctx(t), prefix, 2, store.ListOptions{After: after}) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, p)
				}
				eqSlice(t, fmt.Sprintf("walk %q after %q", prefix, after), got, want[i+1:])
			}
		}
		// After a path that is gone (deleted, never written), the listing
		// goes on from where it would be.
		got, err := s.ListPaths(ctx(t), "a/b/", 10, store.ListOptions{After: "a/b/gone.md"})
		if err != nil {
			t.Fatal(err)
		}
		eqSlice(t, "list after a deleted path", got, []string{"a/b/z.md"})
	}},
	{"namespaces_page_by_page", func(t *testing.T, e *Env) {
		s := e.Store
		// A namespace whose only file was deleted is none (a tombstone on
		// the primitive path).
		seedWalk(t, s, "y/gone.md")
		// The first segments holding a file, in the order of their paths
		// ("a-b/" before "a/"); "a.md" is a file, no namespace.
		want := []string{"a-b", "a", "ab", "b", "z"}
		for _, limit := range []int{1, 2, 10} {
			var got []string
			r := store.NamespacesRequest{Limit: limit}
			for range len(want) + 1 {
				page, err := s.Namespaces(ctx(t), r)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page.Namespaces...)
				if page.Next == "" {
					break
				}
				r.After = page.Next
			}
			eqSlice(t, fmt.Sprintf("namespaces by %d", limit), got, want)
		}
	}},
}
