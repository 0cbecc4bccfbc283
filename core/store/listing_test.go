package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	_ "github.com/agentmem/agentmem/core/memstore" // mem:, for the example
	"github.com/agentmem/agentmem/core/store"
)

// listingStore holds files in four namespaces, and rows that make none: a
// top-level file, a namespace of only tombstones, one of only the store's
// own (reserved) rows, and tombstones and reserved rows between the files
// of the others.
func listingStore(t *testing.T) (*store.Store, []string) {
	t.Helper()
	ctx := t.Context()
	d := newMemDriver(t)
	s := store.New(d, nil)
	t.Cleanup(func() { s.Close() })
	var files []string
	for _, p := range []string{"alice/main/MEMORY.md", "alice/main/a.md", "alice/notes/b.md", "bob/main/MEMORY.md",
		"bob-b/main/x.md", "carol/main/MEMORY.md", "carol/main/z.md", "top.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x"}); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	raw := []driver.File{
		{Path: "alice/main/gone.md", Version: "1", Tombstone: true},
		{Path: "bob/" + store.ReservedSegmentPrefix + "-index/t", Version: "1", Content: "index"},
		{Path: "dave/main/MEMORY.md", Version: "1", Tombstone: true},
		{Path: "dave/main/old.md", Version: "1", Tombstone: true},
		{Path: "erin/" + store.ReservedSegmentPrefix + "-index/t", Version: "1", Content: "index"},
	}
	for _, f := range raw {
		if err := d.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(files)
	return s, files
}

// TestListPathsAfter lists after each path in turn: the next files, in
// order, none of the tombstones or reserved rows between them.
func TestListPathsAfter(t *testing.T) {
	s, files := listingStore(t)
	for _, prefix := range []string{"", "alice/", "b"} {
		var want []string
		for _, p := range files {
			if strings.HasPrefix(p, prefix) {
				want = append(want, p)
			}
		}
		for i, after := range append([]string{""}, want...) {
			got, err := s.ListPaths(t.Context(), prefix, 2, store.ListOptions{After: after})
			if err != nil {
				t.Fatal(err)
			}
			if next := want[i:min(i+2, len(want))]; !slices.Equal(got, next) {
				t.Errorf("prefix %q after %q: %q, want %q", prefix, after, got, next)
			}
		}
	}
	// After need not exist: the listing goes on after it.
	got, err := s.ListPaths(t.Context(), "alice/", 10, store.ListOptions{After: "alice/main/b.md"})
	if err != nil || !slices.Equal(got, []string{"alice/notes/b.md"}) {
		t.Errorf("after a path that does not exist: %q, %v", got, err)
	}
}

// TestWalkAfter resumes a walk after a path.
func TestWalkAfter(t *testing.T) {
	s, files := listingStore(t)
	for i, from := range files {
		var got []string
		for p, err := range s.Walk(t.Context(), "", 2, store.ListOptions{After: from}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		if !slices.Equal(got, files[i+1:]) {
			t.Errorf("after %q: %q, want %q", from, got, files[i+1:])
		}
	}
}

// TestListAfterRefused: an After that is no path of the prefix, or more
// than one ListOptions, is refused with the sentinel that says what to
// fix, by ListPaths and Walk alike.
func TestListAfterRefused(t *testing.T) {
	s, _ := listingStore(t)
	for _, c := range []struct {
		prefix string
		opts   []store.ListOptions
		want   error
	}{
		{"alice/", []store.ListOptions{{After: "bob/main/MEMORY.md"}}, store.ErrInvalidPath},
		{"", []store.ListOptions{{After: "a/../b"}}, store.ErrInvalidPath},
		{"", []store.ListOptions{{After: "bob/" + store.ReservedSegmentPrefix + "-index/t"}}, store.ErrInvalidPath},
		{"", []store.ListOptions{{}, {}}, store.ErrInvalidBound},
	} {
		if _, err := s.ListPaths(t.Context(), c.prefix, 5, c.opts...); !errors.Is(err, c.want) {
			t.Errorf("ListPaths(%q, %+v): %v, want %v", c.prefix, c.opts, err, c.want)
		}
		var werr error
		for _, err := range s.Walk(t.Context(), c.prefix, 0, c.opts...) {
			werr = err
		}
		if !errors.Is(werr, c.want) {
			t.Errorf("Walk(%q, %+v): %v, want %v", c.prefix, c.opts, werr, c.want)
		}
	}
}

// TestNamespaces pages the namespaces: each that holds a file once, in
// the order of their paths ("bob-b/" before "bob/"), with Next on every page but the last; tombstones, reserved rows
// and top-level files make none.
func TestNamespaces(t *testing.T) {
	s, _ := listingStore(t)
	want := []string{"alice", "bob-b", "bob", "carol"}
	for limit := 1; limit <= len(want)+1; limit++ {
		var got []string
		r := store.NamespacesRequest{Limit: limit}
		for pages := 0; ; pages++ {
			if pages > len(want) {
				t.Fatalf("limit %d: more pages than namespaces", limit)
			}
			page, err := s.Namespaces(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Namespaces...)
			if page.Next == "" {
				break
			}
			if len(page.Namespaces) != limit || page.Next != page.Namespaces[limit-1] {
				t.Fatalf("limit %d: page %q with Next %q", limit, page.Namespaces, page.Next)
			}
			r.After = page.Next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
	// A namespace emptied by deletes leaves the listing.
	if _, err := s.Forget(t.Context(), "bob-b/", nil); err != nil {
		t.Fatal(err)
	}
	page, err := s.Namespaces(t.Context(), store.NamespacesRequest{Limit: 10})
	if err != nil || !slices.Equal(page.Namespaces, []string{"alice", "bob", "carol"}) || page.Next != "" {
		t.Errorf("after forgetting bob-b: %+v, %v", page, err)
	}
}

// TestNamespacesManyTombstones: a run of tombstones longer than any page
// between two namespaces is crossed (the pages grow) without losing one.
func TestNamespacesManyTombstones(t *testing.T) {
	ctx := t.Context()
	d := newMemDriver(t)
	s := store.New(d, nil)
	t.Cleanup(func() { s.Close() })
	for _, p := range []string{"a/x.md", "z/x.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2000 {
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("m%04d/x.md", i), Version: "1", Tombstone: true}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.Namespaces(ctx, store.NamespacesRequest{Limit: 10})
	if err != nil || !slices.Equal(page.Namespaces, []string{"a", "z"}) {
		t.Errorf("%+v, %v", page, err)
	}
}

// TestNamespacesRefused: a bad bound or cursor says what to pass, and a
// closed store or a done context is refused.
func TestNamespacesRefused(t *testing.T) {
	s, _ := listingStore(t)
	for _, c := range []struct {
		r    store.NamespacesRequest
		want error
	}{
		{store.NamespacesRequest{}, store.ErrInvalidBound},
		{store.NamespacesRequest{Limit: -1}, store.ErrInvalidBound},
		{store.NamespacesRequest{Limit: 1, After: "alice/main"}, store.ErrInvalidPath},
		{store.NamespacesRequest{Limit: 1, After: ".."}, store.ErrInvalidPath},
	} {
		if _, err := s.Namespaces(t.Context(), c.r); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.r, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Namespaces(ctx, store.NamespacesRequest{Limit: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
	if _, err := store.New(nil, nil).Namespaces(t.Context(), store.NamespacesRequest{Limit: 1}); !errors.Is(err, store.ErrNoDriver) {
		t.Errorf("no driver: %v, want ErrNoDriver", err)
	}
}

func ExampleStore_Namespaces() {
	ctx := context.Background()
	s, err := store.Open(ctx, "mem://", nil) // core/memstore registers mem:
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, p := range []string{"alice/main/MEMORY.md", "bob/main/MEMORY.md", "carol/main/MEMORY.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "- hello\n"}); err != nil {
			fmt.Println(err)
			return
		}
	}
	r := store.NamespacesRequest{Limit: 2}
	for {
		page, err := s.Namespaces(ctx, r)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(page.Namespaces)
		if page.Next == "" {
			break
		}
		r.After = page.Next
	}
	// Output:
	// [alice bob]
	// [carol]
}
