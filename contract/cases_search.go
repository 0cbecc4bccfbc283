package contract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"testing"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"

	"github.com/agentmem/agentmem/core/store"
)

func mustSearch(t *testing.T, s *store.Store, r search.Request) search.Result {
	t.Helper()
	res, err := s.Search(ctx(t), r)
	if err != nil {
		t.Fatalf("search %+v: %v", r, err)
	}
	return res
}

func matchPaths(res search.Result) []string {
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.Path)
	}
	return out
}

// budgetUsed is Σ(len(scope-relative path) + len(snippet)) in runes.
func budgetUsed(prefix string, res search.Result) int {
	n := 0
	for _, m := range res.Matches {
		n += utf8.RuneCountInString(strings.TrimPrefix(m.Path, prefix)) + utf8.RuneCountInString(m.Snippet)
	}
	return n
}

func seedTenants(t *testing.T, s *store.Store) {
	for p, c := range map[string]string{
		"tenant-a/main/alpha.md":   "alpha alpha",
		"tenant-a/main/beta.md":    "alpha",
		"tenant-a/main/other.md":   "unrelated",
		"tenant-b/main/private.md": "alpha alpha alpha",
	} {
		create(t, s, p, c)
	}
}

// searchCases are the literal-scoring cases (the reference notebook's
// exact scores, order and snippets), the bounds in both modes, the BM25
// cases and the native scope read.
var searchCases = slices.Concat(literalSearchCases, bothSearchModes(boundSearchCases), bm25SearchCases, scopeReadCases)

// modeCase is a case that runs once per search mode.
type modeCase struct {
	name string
	run  func(t *testing.T, e *Env, m search.Mode)
}

// bothSearchModes turns each mode case into two cases, <name>_literal and
// <name>_bm25.
func bothSearchModes(cs []modeCase) []Case {
	var out []Case
	for _, c := range cs {
		for _, m := range []search.Mode{search.Literal, search.BM25} {
			out = append(out, Case{c.name + "_" + string(m), func(t *testing.T, e *Env) { c.run(t, e, m) }})
		}
	}
	return out
}

// literalSearchCases pin the reference notebook's literal scoring.
var literalSearchCases = []Case{
	{"search_scoped", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		const p = "tenant-a/main/"
		res := mustSearch(t, e.Store, search.Request{Mode: search.Literal, Prefix: p, Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100})
		eqSlice(t, "paths", matchPaths(res), []string{p + "alpha.md", p + "beta.md"})
		eq(t, "scanned", res.Scanned, 3)
		eq(t, "truncated", res.Truncated, false)
		eq(t, "score alpha", res.Matches[0].Score, 4.0)
		eq(t, "score beta", res.Matches[1].Score, 1.0)
		if n := budgetUsed(p, res); n > 80 {
			t.Fatalf("budget used %d > 80", n)
		}
	}},
	{"search_snippet_windows", func(t *testing.T, e *Env) {
		create(t, e.Store, "a", "012345alpha-tail")
		res := mustSearch(t, e.Store, search.Request{Mode: search.Literal, Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 3, MaxFileChars: 100})
		if len(res.Matches) != 1 || res.Matches[0].Snippet != ".." {
			t.Fatalf("max_chars 3: %+v", res.Matches)
		}
		res = mustSearch(t, e.Store, search.Request{Mode: search.Literal, Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 12, MaxFileChars: 100})
		if len(res.Matches) != 1 || res.Matches[0].Snippet != "...alpha..." {
			t.Fatalf("max_chars 12: %+v", res.Matches)
		}
		res = mustSearch(t, e.Store, search.Request{Mode: search.Literal, Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100})
		eq(t, "whole", res.Matches[0].Snippet, "012345alpha-tail")
	}},
	{"search_namespace_blind", func(t *testing.T, e *Env) {
		ns := strings.Repeat("n", 180)
		prefix := ns + "/main/"
		create(t, e.Store, prefix+"note.md", "some TARGET text")
		create(t, e.Store, prefix+"main.md", "unrelated")
		res := mustSearch(t, e.Store, search.Request{Mode: search.Literal, Prefix: prefix, Query: ns + " main/", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eq(t, "namespace never scores", len(res.Matches), 0)
		res = mustSearch(t, e.Store, search.Request{Mode: search.Literal, Prefix: prefix, Query: "main", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eqSlice(t, "name scores only its own part", matchPaths(res), []string{prefix + "main.md"})
		eq(t, "score", res.Matches[0].Score, 2.0)
	}},
	{"search_ranking_tie_break", func(t *testing.T, e *Env) {
		for p, c := range map[string]string{"s/b.md": "x", "s/a.md": "x", "s/c.md": "x x", "s/xx.md": "none"} {
			create(t, e.Store, p, c)
		}
		res := mustSearch(t, e.Store, search.Request{Mode: search.Literal, Prefix: "s/", Query: "X", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100})
		// xx.md: name "xx.md" has 2 hits → score 4; c: 2; a, b: 1 each.
		eqSlice(t, "order", matchPaths(res), []string{"s/xx.md", "s/c.md", "s/a.md", "s/b.md"})
	}},
	{"search_terms_non_overlapping", func(t *testing.T, e *Env) {
		create(t, e.Store, "q/a.md", "aaaa Alpha ALPHA")
		res := mustSearch(t, e.Store, search.Request{Mode: search.Literal, Prefix: "q/", Query: "aa alpha", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100})
		// "aa" occurs twice without overlap in "aaaa …"; "alpha" twice.
		eq(t, "score", res.Matches[0].Score, 4.0)
	}},
}

// boundSearchCases hold in every mode.
var boundSearchCases = []modeCase{
	{"search_shared_budget", func(t *testing.T, e *Env, m search.Mode) {
		// Eight long matches share the budget: none takes it all.
		for i := range 8 {
			create(t, e.Store, "g/"+string(rune('a'+i))+".md", strings.Repeat("filler words ", 100)+"needle "+strings.Repeat("more filler ", 100))
		}
		create(t, e.Store, "g/short.md", "needle")
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "g/", Query: "needle", Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 10000})
		eq(t, "matches", len(res.Matches), 9)
		for _, mt := range res.Matches {
			if mt.Path == "g/short.md" {
				eq(t, "short file whole", mt.Snippet, "needle")
			}
			if !strings.Contains(mt.Snippet, "needle") || (mt.Path != "g/short.md" && utf8.RuneCountInString(mt.Snippet) < 400) {
				t.Fatalf("snippet of %s: %d runes %q", mt.Path, utf8.RuneCountInString(mt.Snippet), mt.Snippet)
			}
		}
		if n := budgetUsed("g/", res); n > 4000 || n < 3900 {
			t.Fatalf("budget used %d, want 3900..4000", n)
		}
		// A budget too small to share returns fewer matches, each useful.
		res = mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "g/", Query: "needle", Limit: 10, MaxFiles: 100, MaxChars: 120, MaxFileChars: 10000})
		eq(t, "matches in 120", len(res.Matches), 2)
		eq(t, "truncated", res.Truncated, true)
	}},
	{"search_max_files", func(t *testing.T, e *Env, m search.Mode) {
		seedTenants(t, e.Store)
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 1, MaxChars: 80, MaxFileChars: 100})
		eq(t, "scanned", res.Scanned, 1)
		eq(t, "truncated", res.Truncated, true)
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md"})
	}},
	{"search_char_budget", func(t *testing.T, e *Env, m search.Mode) {
		seedTenants(t, e.Store)
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 1, MaxFileChars: 100})
		eq(t, "matches", len(res.Matches), 0)
		eq(t, "truncated", res.Truncated, true)
		res = mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 14, MaxFileChars: 100})
		eqSlice(t, "fits one", matchPaths(res), []string{"tenant-a/main/alpha.md"})
		eq(t, "truncated", res.Truncated, true)
		if n := budgetUsed("tenant-a/main/", res); n > 14 {
			t.Fatalf("budget used %d > 14", n)
		}
	}},
	{"search_limit", func(t *testing.T, e *Env, m search.Mode) {
		seedTenants(t, e.Store)
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 1, MaxFiles: 10, MaxChars: 100, MaxFileChars: 100})
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md"})
		eq(t, "truncated", res.Truncated, true)
	}},
	{"search_empty_query", func(t *testing.T, e *Env, m search.Mode) {
		seedTenants(t, e.Store)
		base := search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100}
		for name, mod := range map[string]func(*search.Request){
			"empty query": func(r *search.Request) { r.Query = "" },
			"blank query": func(r *search.Request) { r.Query = " \t\n\u3000\x1c" },
		} {
			r := base
			mod(&r)
			res := mustSearch(t, e.Store, r)
			if len(res.Matches) != 0 || res.Scanned != 0 || res.Truncated {
				t.Fatalf("%s: %+v", name, res)
			}
		}
	}},
	{"search_per_file_bound", func(t *testing.T, e *Env, m search.Mode) {
		prefix := strings.Repeat("n", 180) + "/main/"
		create(t, e.Store, prefix+"note.md", "some TARGET text")
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: prefix, Query: "target", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 6})
		eq(t, "no match beyond max_file_chars", len(res.Matches), 0)
		eq(t, "cut file flags truncation", res.Truncated, true)
		res = mustSearch(t, e.Store, search.Request{Mode: m, Prefix: prefix, Query: "target", Limit: 5, MaxFiles: 5, MaxChars: 20, MaxFileChars: 100})
		eqSlice(t, "match", matchPaths(res), []string{prefix + "note.md"})
		eq(t, "not truncated", res.Truncated, false)
	}},
	{"search_only_direct_files", func(t *testing.T, e *Env, m search.Mode) {
		create(t, e.Store, "t/main/top.md", "needle")
		create(t, e.Store, "t/main/sub/deep.md", "needle needle")
		create(t, e.Store, "t/mainly.md", "needle")
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "t/main/", Query: "needle", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eqSlice(t, "direct only", matchPaths(res), []string{"t/main/top.md"})
		eq(t, "scanned", res.Scanned, 1)
		eq(t, "truncated", res.Truncated, false)
	}},
	{"search_recursive", func(t *testing.T, e *Env, m search.Mode) {
		// Two folders and a nested one under the tenant's prefix, files
		// directly under it, and other tenants' files that must not count.
		filler := strings.Repeat("filler words ", 20)
		folders := []string{"tenant-a/main/", "tenant-a/main/sub/", "tenant-a/main/sub/inner/", "tenant-a/notes/"}
		for i, folder := range folders {
			create(t, e.Store, folder+[]string{"top.md", "deep.md", "x.md", "n.md"}[i], strings.Repeat("needle ", i+1)+filler)
			create(t, e.Store, folder+"other.md", filler)
		}
		create(t, e.Store, "tenant-b/main/secret.md", "needle needle needle "+filler)
		create(t, e.Store, "tenant-ab/main/near.md", "needle "+filler)
		const p = "tenant-a/"
		r := search.Request{Mode: m, Prefix: p, Query: "needle", Limit: 10, MaxFiles: 10, MaxChars: 100000, MaxFileChars: 1000}
		eq(t, "not recursive: no file directly under the prefix", len(mustSearch(t, e.Store, r).Matches), 0)

		// Each folder ranked as a search of it alone, merged by score then path.
		var want []search.Match
		scanned := 0
		for _, folder := range folders {
			q := r
			q.Prefix = folder
			res := mustSearch(t, e.Store, q)
			want = append(want, res.Matches...)
			scanned += res.Scanned
		}
		slices.SortFunc(want, func(a, b search.Match) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Path, b.Path))
		})
		r.Recursive = true
		res := mustSearch(t, e.Store, r)
		if !reflect.DeepEqual(res.Matches, want) {
			t.Fatalf("recursive:\n%+v\nthe folders' own searches merged:\n%+v", res.Matches, want)
		}
		eq(t, "matches", len(res.Matches), 4)
		eq(t, "scanned: the folders' files", res.Scanned, scanned)
		eq(t, "scanned", res.Scanned, 8)
		eq(t, "truncated", res.Truncated, false)

		// One Limit and one MaxChars over all the folders, shared.
		r.Limit = 2
		res = mustSearch(t, e.Store, r)
		eqSlice(t, "limit over the tree", matchPaths(res), matchPaths(search.Result{Matches: want[:2]}))
		eq(t, "truncated by limit", res.Truncated, true)
		r.Limit, r.MaxChars = 10, 200
		res = mustSearch(t, e.Store, r)
		if n := len(res.Matches); n < 2 || n > 3 {
			t.Fatalf("max_chars 200 shared by %d matches, want 2 or 3: %+v", n, res.Matches)
		}
		eq(t, "budget used, names from the prefix", budgetUsed(p, res), 200)
		eq(t, "truncated by max_chars", res.Truncated, true)

		// A partial name: the files of tenant-a/ starting with "ma", and
		// every folder below those names.
		r.Prefix, r.MaxChars = "tenant-a/ma", 100000
		var under []string
		for _, p := range matchPaths(search.Result{Matches: want}) {
			if !strings.HasPrefix(p, "tenant-a/notes/") {
				under = append(under, p)
			}
		}
		eqSlice(t, "partial prefix", matchPaths(mustSearch(t, e.Store, r)), under)
	}},
	{"search_unicode_budget", func(t *testing.T, e *Env, m search.Mode) {
		create(t, e.Store, "u/a.md", strings.Repeat("日本語 ", 20)+"針 "+strings.Repeat("😀", 40))
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "u/", Query: "針", Limit: 5, MaxFiles: 5, MaxChars: 20, MaxFileChars: 1000})
		if len(res.Matches) != 1 {
			t.Fatalf("matches = %+v", res.Matches)
		}
		if n := budgetUsed("u/", res); n != 20 {
			t.Fatalf("budget used %d runes, want exactly 20", n)
		}
		if !utf8.ValidString(res.Matches[0].Snippet) || !strings.Contains(res.Matches[0].Snippet, "針") {
			t.Fatalf("snippet %q", res.Matches[0].Snippet)
		}
	}},
	{"search_many_files", func(t *testing.T, e *Env, m search.Mode) {
		for i := 0; i < 60; i++ {
			c := "filler"
			if i%3 == 0 {
				c = "needle"
			}
			create(t, e.Store, "m/"+string(rune('a'+i/26))+string(rune('a'+i%26))+".md", c)
		}
		res := mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "m/", Query: "needle", Limit: 100, MaxFiles: 100, MaxChars: 10000, MaxFileChars: 100})
		eq(t, "matches", len(res.Matches), 20)
		eq(t, "scanned", res.Scanned, 60)
		eq(t, "truncated", res.Truncated, false)
		res = mustSearch(t, e.Store, search.Request{Mode: m, Prefix: "m/", Query: "needle", Limit: 100, MaxFiles: 30, MaxChars: 10000, MaxFileChars: 100})
		if m == search.Literal {
			// Literal mode scans, at most MaxFiles files, and says so.
			eq(t, "matches in first 30", len(res.Matches), 10)
			eq(t, "truncated", res.Truncated, true)
			eq(t, "fallback", res.Fallback, search.FallbackLiteral)
			return
		}
		// The folder's index covers it whole: MaxFiles bounds only a scan.
		eq(t, "matches with max_files 30", len(res.Matches), 20)
		eq(t, "truncated", res.Truncated, false)
		eq(t, "fallback", res.Fallback, "")
	}},
	{"search_index_beyond_max_files", func(t *testing.T, e *Env, m search.Mode) {
		// A folder larger than MaxFiles: its first search scans MaxFiles
		// files and says why, while its index is built; then the index
		// answers for the whole folder.
		if m == search.Literal {
			return // literal mode always scans (search_many_files)
		}
		for i := range 40 {
			create(t, e.Store, fmt.Sprintf("big/n%02d.md", i), fmt.Sprintf("filler note %d about the weather", i))
		}
		create(t, e.Store, "big/zz-last.md", "the heron nests by the river")
		s := e.NewStore(t, e.Options(), nil)
		req := search.Request{Mode: m, Prefix: "big/", Query: "heron river", Limit: 5, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100}
		res := mustSearch(t, s, req)
		eq(t, "first search's fallback", res.Fallback, search.FallbackBuilding)
		eq(t, "first search truncated", res.Truncated, true)
		eq(t, "first search scanned", res.Scanned, 10)
		if len(res.Matches) != 0 {
			t.Fatalf("first search = %v: the file past max_files was scored", matchPaths(res))
		}
		waitIndexed(t, s)
		res = mustSearch(t, s, req)
		eq(t, "fallback once built", res.Fallback, "")
		eqSlice(t, "matches once built", matchPaths(res), []string{"big/zz-last.md"})
		eq(t, "scanned once built", res.Scanned, 41)
		eq(t, "truncated once built", res.Truncated, false)
		// Fresh after each change, at once.
		create(t, s, "big/aa-first.md", "a heron on the river bank")
		eq(t, "after a write", len(matchPaths(mustSearch(t, s, req))), 2)
		v := read(t, s, "big/zz-last.md", 1).Version
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "big/zz-last.md", Expected: v}); err != nil {
			t.Fatal(err)
		}
		eqSlice(t, "after a delete", matchPaths(mustSearch(t, s, req)), []string{"big/aa-first.md"})
	}},
	{"search_batched_reads", func(t *testing.T, e *Env, m search.Mode) {
		// Search through the driver's batched read alone (no native scope
		// read), so BatchGetter is proven on every backend that has it.
		if !driver.CapabilitiesOf(e.Driver).BatchGet {
			return // primitives mode, or a backend without BatchGetter: covered by search_* above
		}
		seedTenants(t, e.Store)
		v := read(t, e.Store, "tenant-a/main/other.md", 1).Version
		if _, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "tenant-a/main/other.md", Expected: v, Operation: op("del-other", "fp")}); err != nil {
			t.Fatal(err)
		}
		i := NewInterceptor(e.Driver)
		i.caps = driver.Capabilities{BatchGet: true}
		c := NewCounter(i)
		s := e.NewStore(t, e.Options(), func(driver.Driver) driver.Driver { return c })
		req := search.Request{Mode: m, Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100}
		res := mustSearch(t, s, req)
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md", "tenant-a/main/beta.md"})
		eq(t, "scanned", res.Scanned, 2)
		// BM25's first search looks for the folder's persisted index (one
		// read of its manifest), builds the index from one batched read and
		// scores its candidates as read; once the index is written, a later
		// search reads its candidates: one batched read a search.
		eq(t, "batched reads", c.Counts()["GetFiles"], 1)
		singles := 0
		if m == search.BM25 {
			singles = 1 // the manifest
		}
		eq(t, "single reads", c.Counts()["GetFile"], singles)
		if m == search.BM25 {
			waitIndexed(t, s)
			c.Reset()
			mustSearch(t, s, req)
			eq(t, "batched reads of the next search", c.Counts()["GetFiles"], 1)
			eq(t, "single reads of the next search", c.Counts()["GetFile"], 0)
		}
		rows, err := i.GetFiles(ctx(t), []string{"tenant-a/main/beta.md", "missing.md", "tenant-a/main/alpha.md"})
		if err != nil || len(rows) != 2 {
			t.Fatalf("GetFiles = %d rows, %v", len(rows), err)
		}
	}},
	{"search_lookahead_never_scored", func(t *testing.T, e *Env, m search.Mode) {
		// One file more than MaxFiles only says "truncated": it is never
		// read, so it never matches, even when a scanned file vanishes.
		// A scan's rule: BM25 answers from the folder's index, which holds
		// every file (index_fallback_says_so covers its first search).
		if m != search.Literal {
			return
		}
		for p, c := range map[string]string{"s/a.md": "x", "s/b.md": "x", "s/needle.md": "zzz"} {
			create(t, e.Store, p, c)
		}
		i := NewInterceptor(e.Driver)
		var once sync.Once
		i.Before = func(call string) error {
			if call == "GetFile" || call == "GetFiles" {
				// The first read, the search's or its folder's index
				// build's beside it (whichever comes first), sees s/a.md
				// vanish; the background build may run past the test.
				once.Do(func() {
					bg := context.Background()
					f, err := e.Store.Read(bg, "s/a.md", 1)
					if err == nil { // a failure leaves s/a.md, which the search then reads
						_, _ = e.Store.Delete(bg, store.DeleteRequest{Path: "s/a.md", Expected: f.Version})
					}
				})
			}
			return nil
		}
		s := e.NewStore(t, e.Options(), func(driver.Driver) driver.Driver { return i })
		res := mustSearch(t, s, search.Request{Mode: m, Prefix: "s/", Query: "needle x", Limit: 10, MaxFiles: 2, MaxChars: 1000, MaxFileChars: 100})
		for _, m := range res.Matches {
			if m.Path == "s/needle.md" {
				t.Fatalf("the lookahead file was scored: %+v", res)
			}
		}
		eq(t, "truncated", res.Truncated, true)
	}}}

var scopeReadCases = []Case{
	{"scope_read_counts_runes", func(t *testing.T, e *Env) {
		// A native scope read bounds each file in characters, never bytes,
		// and never splits one; NUL is text like any other character.
		sr, ok := e.Driver.(driver.ScopeReader)
		if !ok || !driver.CapabilitiesOf(e.Driver).ScopeRead {
			return // no native scope read: the store cuts contents itself (search_unicode_budget)
		}
		content := "héllo wörld 😀😀 日本語" // 18 runes, 32 bytes
		for _, p := range []string{"s/a.md", "s/b.md", "s/n/nested.md", "s0.md"} {
			create(t, e.Store, p, content)
		}
		create(t, e.Store, "z/nul.md", "a\x00é😀\x00b")
		for _, c := range []struct {
			prefix    string
			max       int
			want      string
			truncated bool
		}{
			{"s/", 14, "héllo wörld 😀😀", true},
			{"s/", 17, "héllo wörld 😀😀 日本", true},
			{"s/", 18, content, false},
			{"s/", 1 << 30, content, false},
			{"z/", 1, "a", true},
			{"z/", 3, "a\x00é", true},
			{"z/", 6, "a\x00é😀\x00b", false},
		} {
			got, err := sr.ReadScope(ctx(t), driver.ScopeParams{Prefix: c.prefix, Limit: 10, MaxChars: c.max})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range got {
				paths = append(paths, f.Path)
				if f.Content != c.want || f.Truncated != c.truncated {
					t.Fatalf("MaxChars %d: %q truncated=%v, want %q %v", c.max, f.Content, f.Truncated, c.want, c.truncated)
				}
			}
			want := []string{"s/a.md", "s/b.md"}
			if c.prefix == "z/" {
				want = []string{"z/nul.md"}
			}
			eqSlice(t, "ReadScope paths", paths, want)
		}
	}},
}

// bm25SearchCases pin the default ranking: stems, the name field, IDF from
// the scope alone, passages, and the shared budget.
var bm25SearchCases = []Case{
	{"search_bm25_stems_and_names", func(t *testing.T, e *Env) {
		const p = "u/main/"
		for name, c := range map[string]string{
			"food.md":    "- Pescatarian; eats fish twice a week.\n",
			"travel.md":  "- Prefers trains to planes.\n",
			"commute.md": "- Cycles to the office when it is dry.\n",
		} {
			create(t, e.Store, p+name, c)
		}
		r := search.Request{Prefix: p, Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000}
		for q, want := range map[string][]string{
			"cycling":           {p + "commute.md"},
			"FOOD":              {p + "food.md"},
			"train travelling":  {p + "travel.md"},
			"Fish, planes!":     {p + "travel.md", p + "food.md"},                   // the shorter file first
			"office food trips": {p + "food.md", p + "commute.md", p + "travel.md"}, // trips → travel, a related word, last
		} {
			r.Query = q
			eqSlice(t, q, matchPaths(mustSearch(t, e.Store, r)), want)
		}
		// N = 3, df = 1: idf = ln(1 + 2.5/1.5); commute.md has 8 terms and
		// the average is 6: tf = 1/(0.25 + 0.75·8/6) = 0.8, so the score is
		// idf · 0.8 · 2.2 / (0.8 + 1.2) = 0.8631 (4 decimals).
		r.Query = "cycling"
		eq(t, "score", mustSearch(t, e.Store, r).Matches[0].Score, 0.8631)
		r.Mode = search.BM25
		eq(t, "explicit bm25 score", mustSearch(t, e.Store, r).Matches[0].Score, 0.8631)
	}},
	{"search_bm25_idf_from_scope_only", func(t *testing.T, e *Env) {
		const p = "a/main/"
		create(t, e.Store, p+"x.md", "the the the the the weather")
		create(t, e.Store, p+"y.md", "the fish")
		create(t, e.Store, p+"z.md", "the end")
		r := search.Request{Prefix: p, Query: "the fish", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000}
		before := mustSearch(t, e.Store, r)
		eqSlice(t, "rare terms outweigh common ones", matchPaths(before)[:1], []string{p + "y.md"})
		// Other tenants, and deeper folders, change no statistic.
		for i := range 12 {
			create(t, e.Store, "b/main/"+string(rune('a'+i))+".md", "fish fish")
			create(t, e.Store, p+"deep/"+string(rune('a'+i))+".md", "fish")
		}
		after := mustSearch(t, e.Store, r)
		eqSlice(t, "paths", matchPaths(after), matchPaths(before))
		for i := range after.Matches {
			eq(t, "score "+after.Matches[i].Path, after.Matches[i].Score, before.Matches[i].Score)
		}
		r.Query = "a main"
		eq(t, "the scope never scores", len(mustSearch(t, e.Store, r).Matches), 0)
	}},
	{"search_bm25_passage", func(t *testing.T, e *Env) {
		text := "Early on we talked about the weather. " + strings.Repeat("Nothing of note here. ", 40) +
			"The boiler was serviced in October by Carlos. " + strings.Repeat("More small talk. ", 40) + "The end, boiler."
		create(t, e.Store, "p/log.md", text)
		res := mustSearch(t, e.Store, search.Request{Prefix: "p/", Query: "who serviced the boiler", Limit: 5, MaxFiles: 5, MaxChars: 80, MaxFileChars: 10000})
		if len(res.Matches) != 1 || !strings.Contains(res.Matches[0].Snippet, "boiler was serviced") {
			t.Fatalf("snippet is not the best passage: %+v", res.Matches)
		}
		eq(t, "budget", budgetUsed("p/", res), 80)
	}},
	{"search_bm25_unicode", func(t *testing.T, e *Env) {
		create(t, e.Store, "w/a.md", "Café in São Paulo; 東京タワー")
		create(t, e.Store, "w/b.md", "nothing")
		for _, q := range []string{"CAFE", "sao", "東京", "タワー"} {
			res := mustSearch(t, e.Store, search.Request{Prefix: "w/", Query: q, Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100})
			eqSlice(t, q, matchPaths(res), []string{"w/a.md"})
		}
		// A query without words is scored literally.
		res := mustSearch(t, e.Store, search.Request{Prefix: "w/", Query: ";", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100})
		eqSlice(t, "punctuation", matchPaths(res), []string{"w/a.md"})
		eq(t, "literal score", res.Matches[0].Score, 1.0)
	}},
	{"search_mode_invalid", func(t *testing.T, e *Env) {
		create(t, e.Store, "v/a.md", "x")
		_, err := e.Store.Search(ctx(t), search.Request{Prefix: "v/", Query: "x", Mode: "vector", Limit: 1, MaxFiles: 1, MaxChars: 10, MaxFileChars: 10})
		if !errors.Is(err, store.ErrInvalidSearchMode) {
			t.Fatalf("mode vector: %v", err)
		}
	}},
}
