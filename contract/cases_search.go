package contract

import (
	"strings"
	"sync"

	"github.com/agentmem/agentmem/core/driver"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/store"
)

func search(t *testing.T, s *store.Store, r store.SearchRequest) store.SearchResult {
	t.Helper()
	res, err := s.Search(ctx(t), r)
	if err != nil {
		t.Fatalf("search %+v: %v", r, err)
	}
	return res
}

func matchPaths(res store.SearchResult) []string {
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.Path)
	}
	return out
}

// budgetUsed is Σ(len(scope-relative path) + len(snippet)) in runes.
func budgetUsed(prefix string, res store.SearchResult) int {
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

var searchCases = []Case{
	{"search_scoped", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		const p = "tenant-a/main/"
		res := search(t, e.Store, store.SearchRequest{Prefix: p, Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100})
		eqSlice(t, "paths", matchPaths(res), []string{p + "alpha.md", p + "beta.md"})
		eq(t, "scanned", res.Scanned, 3)
		eq(t, "truncated", res.Truncated, false)
		eq(t, "score alpha", res.Matches[0].Score, 4.0)
		eq(t, "score beta", res.Matches[1].Score, 1.0)
		if n := budgetUsed(p, res); n > 80 {
			t.Fatalf("budget used %d > 80", n)
		}
	}},
	{"search_max_files", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		res := search(t, e.Store, store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 1, MaxChars: 80, MaxFileChars: 100})
		eq(t, "scanned", res.Scanned, 1)
		eq(t, "truncated", res.Truncated, true)
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md"})
	}},
	{"search_char_budget", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		res := search(t, e.Store, store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 1, MaxFileChars: 100})
		eq(t, "matches", len(res.Matches), 0)
		eq(t, "truncated", res.Truncated, true)
		res = search(t, e.Store, store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 14, MaxFileChars: 100})
		eqSlice(t, "fits one", matchPaths(res), []string{"tenant-a/main/alpha.md"})
		eq(t, "truncated", res.Truncated, true)
		if n := budgetUsed("tenant-a/main/", res); n > 14 {
			t.Fatalf("budget used %d > 14", n)
		}
	}},
	{"search_limit", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		res := search(t, e.Store, store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 1, MaxFiles: 10, MaxChars: 100, MaxFileChars: 100})
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md"})
		eq(t, "truncated", res.Truncated, true)
	}},
	{"search_empty_query", func(t *testing.T, e *Env) {
		seedTenants(t, e.Store)
		base := store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100}
		for name, mod := range map[string]func(*store.SearchRequest){
			"empty query": func(r *store.SearchRequest) { r.Query = "" },
			"blank query": func(r *store.SearchRequest) { r.Query = " \t\n\u3000\x1c" },
		} {
			r := base
			mod(&r)
			res := search(t, e.Store, r)
			if len(res.Matches) != 0 || res.Scanned != 0 || res.Truncated {
				t.Fatalf("%s: %+v", name, res)
			}
		}
	}},
	{"search_snippet_windows", func(t *testing.T, e *Env) {
		create(t, e.Store, "a", "012345alpha-tail")
		res := search(t, e.Store, store.SearchRequest{Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 3, MaxFileChars: 100})
		if len(res.Matches) != 1 || res.Matches[0].Snippet != ".." {
			t.Fatalf("max_chars 3: %+v", res.Matches)
		}
		res = search(t, e.Store, store.SearchRequest{Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 12, MaxFileChars: 100})
		if len(res.Matches) != 1 || res.Matches[0].Snippet != "...alpha..." {
			t.Fatalf("max_chars 12: %+v", res.Matches)
		}
		res = search(t, e.Store, store.SearchRequest{Query: "alpha", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100})
		eq(t, "whole", res.Matches[0].Snippet, "012345alpha-tail")
	}},
	{"search_per_file_bound", func(t *testing.T, e *Env) {
		prefix := strings.Repeat("n", 180) + "/main/"
		create(t, e.Store, prefix+"note.md", "some TARGET text")
		res := search(t, e.Store, store.SearchRequest{Prefix: prefix, Query: "target", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 6})
		eq(t, "no match beyond max_file_chars", len(res.Matches), 0)
		eq(t, "cut file flags truncation", res.Truncated, true)
		res = search(t, e.Store, store.SearchRequest{Prefix: prefix, Query: "target", Limit: 5, MaxFiles: 5, MaxChars: 20, MaxFileChars: 100})
		eqSlice(t, "match", matchPaths(res), []string{prefix + "note.md"})
		eq(t, "not truncated", res.Truncated, false)
	}},
	{"search_namespace_blind", func(t *testing.T, e *Env) {
		ns := strings.Repeat("n", 180)
		prefix := ns + "/main/"
		create(t, e.Store, prefix+"note.md", "some TARGET text")
		create(t, e.Store, prefix+"main.md", "unrelated")
		res := search(t, e.Store, store.SearchRequest{Prefix: prefix, Query: ns + " main/", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eq(t, "namespace never scores", len(res.Matches), 0)
		res = search(t, e.Store, store.SearchRequest{Prefix: prefix, Query: "main", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eqSlice(t, "name scores only its own part", matchPaths(res), []string{prefix + "main.md"})
		eq(t, "score", res.Matches[0].Score, 2.0)
	}},
	{"search_only_direct_files", func(t *testing.T, e *Env) {
		create(t, e.Store, "t/main/top.md", "needle")
		create(t, e.Store, "t/main/sub/deep.md", "needle needle")
		create(t, e.Store, "t/mainly.md", "needle")
		res := search(t, e.Store, store.SearchRequest{Prefix: "t/main/", Query: "needle", Limit: 5, MaxFiles: 5, MaxChars: 1000, MaxFileChars: 100})
		eqSlice(t, "direct only", matchPaths(res), []string{"t/main/top.md"})
		eq(t, "scanned", res.Scanned, 1)
		eq(t, "truncated", res.Truncated, false)
	}},
	{"search_ranking_tie_break", func(t *testing.T, e *Env) {
		for p, c := range map[string]string{"s/b.md": "x", "s/a.md": "x", "s/c.md": "x x", "s/xx.md": "none"} {
			create(t, e.Store, p, c)
		}
		res := search(t, e.Store, store.SearchRequest{Prefix: "s/", Query: "X", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100})
		// xx.md: name "xx.md" has 2 hits → score 4; c: 2; a, b: 1 each.
		eqSlice(t, "order", matchPaths(res), []string{"s/xx.md", "s/c.md", "s/a.md", "s/b.md"})
	}},
	{"search_terms_non_overlapping", func(t *testing.T, e *Env) {
		create(t, e.Store, "q/a.md", "aaaa Alpha ALPHA")
		res := search(t, e.Store, store.SearchRequest{Prefix: "q/", Query: "aa alpha", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 100})
		// "aa" occurs twice without overlap in "aaaa …"; "alpha" twice.
		eq(t, "score", res.Matches[0].Score, 4.0)
	}},
	{"search_unicode_budget", func(t *testing.T, e *Env) {
		create(t, e.Store, "u/a.md", strings.Repeat("日本語 ", 20)+"針 "+strings.Repeat("😀", 40))
		res := search(t, e.Store, store.SearchRequest{Prefix: "u/", Query: "針", Limit: 5, MaxFiles: 5, MaxChars: 20, MaxFileChars: 1000})
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
	{"search_many_files", func(t *testing.T, e *Env) {
		for i := 0; i < 60; i++ {
			c := "filler"
			if i%3 == 0 {
				c = "needle"
			}
			create(t, e.Store, "m/"+string(rune('a'+i/26))+string(rune('a'+i%26))+".md", c)
		}
		res := search(t, e.Store, store.SearchRequest{Prefix: "m/", Query: "needle", Limit: 100, MaxFiles: 100, MaxChars: 10000, MaxFileChars: 100})
		eq(t, "matches", len(res.Matches), 20)
		eq(t, "scanned", res.Scanned, 60)
		eq(t, "truncated", res.Truncated, false)
		res = search(t, e.Store, store.SearchRequest{Prefix: "m/", Query: "needle", Limit: 100, MaxFiles: 30, MaxChars: 10000, MaxFileChars: 100})
		eq(t, "matches in first 30", len(res.Matches), 10)
		eq(t, "truncated", res.Truncated, true)
	}},
	{"search_batched_reads", func(t *testing.T, e *Env) {
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
		s := store.New(shared(c), e.Options())
		res := search(t, s, store.SearchRequest{Prefix: "tenant-a/main/", Query: "alpha", Limit: 10, MaxFiles: 10, MaxChars: 80, MaxFileChars: 100})
		eqSlice(t, "paths", matchPaths(res), []string{"tenant-a/main/alpha.md", "tenant-a/main/beta.md"})
		eq(t, "scanned", res.Scanned, 2)
		eq(t, "batched reads", c.Counts()["GetFiles"], 1)
		eq(t, "single reads", c.Counts()["GetFile"], 0)
		rows, err := i.GetFiles(ctx(t), []string{"tenant-a/main/beta.md", "missing.md", "tenant-a/main/alpha.md"})
		if err != nil || len(rows) != 2 {
			t.Fatalf("GetFiles = %d rows, %v", len(rows), err)
		}
	}},
	{"search_lookahead_never_scored", func(t *testing.T, e *Env) {
		// One file more than MaxFiles only says "truncated": it is never
		// read, so it never matches, even when a scanned file vanishes.
		for p, c := range map[string]string{"s/a.md": "x", "s/b.md": "x", "s/needle.md": "zzz"} {
			create(t, e.Store, p, c)
		}
		i := NewInterceptor(e.Driver)
		var once sync.Once
		i.Before = func(call string) error {
			if call == "GetFile" || call == "GetFiles" {
				once.Do(func() {
					v := read(t, e.Store, "s/a.md", 1).Version
					if _, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "s/a.md", Expected: v}); err != nil {
						t.Error(err)
					}
				})
			}
			return nil
		}
		s := store.New(shared(i), e.Options())
		res := search(t, s, store.SearchRequest{Prefix: "s/", Query: "needle x", Limit: 10, MaxFiles: 2, MaxChars: 1000, MaxFileChars: 100})
		for _, m := range res.Matches {
			if m.Path == "s/needle.md" {
				t.Fatalf("the lookahead file was scored: %+v", res)
			}
		}
		eq(t, "truncated", res.Truncated, true)
	}},
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
