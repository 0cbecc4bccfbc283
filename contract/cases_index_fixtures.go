package contract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// indexGate is an Observer that holds the store's background index work
// (OpIndex: the change feed, builds, checks) while it is shut, so that a
// case can search while a change is only queued, not yet applied.
type indexGate struct {
	mu   sync.Mutex
	shut chan struct{} // nil while open
}

// ObserveOperation implements store.Observer: an OpIndex waits while the
// gate is shut (or until the store closes).
func (g *indexGate) ObserveOperation(ctx context.Context, op store.OperationInfo) (context.Context, func(store.OperationResult)) {
	if op.Op == store.OpIndex {
		g.mu.Lock()
		shut := g.shut
		g.mu.Unlock()
		if shut != nil {
			select {
			case <-shut:
			case <-ctx.Done():
			}
		}
	}
	return ctx, nil
}

// ObserveSettlement implements store.Observer.
func (g *indexGate) ObserveSettlement(context.Context, store.Settlement) {}

// hold shuts the gate: changes queue and are not applied.
func (g *indexGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

// release opens the gate.
func (g *indexGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

// gatedStore returns a store over the Env's driver (opts nil = the Env's
// options) whose index work the returned gate holds; it is released before
// the store closes.
func gatedStore(t *testing.T, e *Env, opts *store.Options) (*store.Store, *indexGate) {
	if opts == nil {
		opts = e.Options()
	}
	g := &indexGate{}
	opts.Observer = g
	s := e.NewStore(t, opts, nil)
	t.Cleanup(g.release) // runs before the store's Close, registered earlier
	return s, g
}

// indexReq is a search of the index cases, its bounds wide enough that
// nothing is cut.
func indexReq(m search.Mode, prefix, q string) search.Request {
	return search.Request{Mode: m, Prefix: prefix, Query: q, Limit: 20, MaxFiles: 100, MaxChars: 100000, MaxFileChars: 10000}
}

// indexedFallback is the Fallback of a search of a folder no larger than
// MaxFiles: none in BM25 mode (its index is built within the search),
// FallbackLiteral in literal mode.
func indexedFallback(m search.Mode) string {
	if m == search.Literal {
		return search.FallbackLiteral
	}
	return ""
}

// expectFound searches s for q under prefix and fails unless the matches
// are exactly the files want (in any order), each snippet a part of the
// file's current content, with the Fallback of a folder that fits.
func expectFound(t *testing.T, s *store.Store, m search.Mode, prefix, q string, want ...string) search.Result {
	t.Helper()
	res := mustSearch(t, s, indexReq(m, prefix, q))
	got := matchPaths(res)
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("search %q under %q = %q, want %q", q, prefix, got, want)
	}
	snippetsCurrent(t, s, res)
	eq(t, fmt.Sprintf("fallback of %q", q), res.Fallback, indexedFallback(m))
	return res
}

// snippetsCurrent fails when a match is not a file under the search's
// folder now, or its snippet is not part of the file's current content:
// a search must never show content that is gone.
func snippetsCurrent(t *testing.T, s *store.Store, res search.Result) {
	t.Helper()
	for _, mt := range res.Matches {
		f := read(t, s, mt.Path, 1<<20)
		if f == nil {
			t.Fatalf("match %s (snippet %q): the file is gone", mt.Path, mt.Snippet)
		}
		// Cut ends are marked with dots over the text: what is left
		// without them is a part of the content.
		part := strings.Trim(mt.Snippet, ".")
		if !strings.Contains(f.Content, part) {
			t.Fatalf("match %s: snippet %q is not in its content %q", mt.Path, mt.Snippet, f.Content)
		}
	}
}

// sameAsFresh fails unless s answers r exactly as a new store over the same
// data does (whose index is built from the store): same matches, scores,
// snippets, Scanned and Truncated.
func sameAsFresh(t *testing.T, e *Env, s *store.Store, r search.Request) {
	t.Helper()
	sameResult(t, fmt.Sprintf("search %q under %q, this store vs a new one", r.Query, r.Prefix), mustSearch(t, s, r), mustSearch(t, e.NewStore(t, e.Options(), nil), r))
}

// sameResult fails unless got and want are the same result.
func sameResult(t *testing.T, what string, got, want search.Result) {
	t.Helper()
	render := func(res search.Result) string {
		var b strings.Builder
		fmt.Fprintf(&b, "scanned=%d truncated=%v fallback=%q", res.Scanned, res.Truncated, res.Fallback)
		for _, m := range res.Matches {
			fmt.Fprintf(&b, "\n  %s %v %q", m.Path, m.Score, m.Snippet)
		}
		return b.String()
	}
	if g, w := render(got), render(want); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// seedFolder creates files (names under prefix → content) through s.
func seedFolder(t *testing.T, s *store.Store, prefix string, files map[string]string) {
	t.Helper()
	for name, c := range files {
		create(t, s, prefix+name, c)
	}
}

// shore is the folder the freshness cases start from: words that no other
// word contains, so literal and BM25 match the same files.
var shore = map[string]string{
	"a.md": "the heron fishes at dawn",
	"b.md": "gulls follow the ferry",
	"c.md": "a quiet harbour morning",
	"d.md": "heron and egret on the mudflat",
	"e.md": "ropes and sails",
}

// freshCheck is one search a freshness case expects after its change: the
// files (names under the case's folder) it must match.
type freshCheck struct {
	query string
	want  []string
}

// checkFresh seeds the folder p with shore through a gated store s, builds
// its index with a first search of each query, then makes change while
// the index work is held (so searches see the change only as queued) and
// checks the searches; then lets the index apply it and checks them again,
// and against a new store's answer.
func checkFresh(t *testing.T, e *Env, m search.Mode, s *store.Store, g *indexGate, p string, change func(), checks ...freshCheck) {
	t.Helper()
	seedFolder(t, s, p, shore)
	for _, c := range checks {
		mustSearch(t, s, indexReq(m, p, c.query))
	}
	g.hold()
	change()
	run := func(when string) {
		t.Helper()
		for _, c := range checks {
			var want []string
			for _, n := range c.want {
				want = append(want, p+n)
			}
			t.Logf("%s: %q", when, c.query)
			expectFound(t, s, m, p, c.query, want...)
		}
	}
	run("queued")
	g.release()
	waitIndexed(t, s)
	run("applied")
	for _, c := range checks {
		sameAsFresh(t, e, s, indexReq(m, p, c.query))
	}
}

// replace writes content over the file at p, whatever its version.
func replace(t *testing.T, s *store.Store, p, content string) {
	t.Helper()
	write(t, s, p, content, read(t, s, p, 1).Version)
}

// remove deletes the file at p.
func remove(t *testing.T, s *store.Store, p string) {
	t.Helper()
	if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: p, Expected: read(t, s, p, 1).Version}); err != nil {
		t.Fatalf("delete %s: %v", p, err)
	}
}

// sourceStore returns a store over a second, empty driver of the backend
// holding files (paths → content): the source of an import or a migrate.
func sourceStore(t *testing.T, e *Env, files map[string]string) *store.Store {
	d := e.h.NewDriver(t)
	if e.Mode == modePrimitives {
		d = Primitives(d)
	}
	src := store.New(d, e.Options())
	t.Cleanup(func() { _ = src.Close() })
	for p, c := range files {
		create(t, src, p, c)
	}
	return src
}

// copyStore copies every file under prefix from src to dst through the
// store API, as agentmem migrate does (its copy lives in cmd/agentmem,
// not in a library): list, read each file, and write it to dst, a
// create or a compare-and-swap over the version dst holds.
func copyStore(t *testing.T, src, dst *store.Store, prefix string) {
	t.Helper()
	for p, err := range src.Walk(ctx(t), prefix, 0) {
		if err != nil {
			t.Fatalf("walk %q: %v", prefix, err)
		}
		f := read(t, src, p, 1<<20)
		if f == nil {
			continue
		}
		expected := ""
		if cur := read(t, dst, p, 1); cur != nil {
			expected = cur.Version
		}
		if _, err := dst.Write(ctx(t), store.WriteRequest{Path: p, Content: f.Content, Metadata: f.Metadata, Expected: expected}); err != nil {
			t.Fatalf("copy %s: %v", p, err)
		}
	}
}

// reindex drops the term index under prefix (Store.Reindex does so first;
// without an embedder it then refuses, ErrInvalidSearchMode).
func reindex(t *testing.T, s *store.Store, prefix string) {
	t.Helper()
	if _, err := s.Reindex(ctx(t), prefix); err != nil && !errors.Is(err, store.ErrInvalidSearchMode) {
		t.Fatalf("Reindex %q: %v", prefix, err)
	}
}

// lostReply wraps d so that, once armed, the first change that reaches the
// backend applies and then reports a failure: the store cannot know that
// the file changed.
func lostReply(d driver.Driver) (driver.Driver, func()) {
	i := NewInterceptor(d)
	var mu sync.Mutex
	armed := false
	i.After = func(call string, err error) error {
		mu.Lock()
		defer mu.Unlock()
		switch call {
		case "Mutate", "CreateFile", "ReplaceFile", "DeleteFile", "Append":
			if armed && err == nil {
				armed = false
				return ErrInjected
			}
		}
		return err
	}
	return i, func() { mu.Lock(); armed = true; mu.Unlock() }
}
