package scale

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/wordvec"
)

// testNotes and testHistory size the tests: a few hundred files, so the
// whole package runs in seconds.
const (
	testNotes   = 300
	testHistory = 30
	testSeed    = 36
)

// words returns s's words, lower-cased (letters, digits and apostrophes
// inside a word; a trailing "'s" dropped).
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.TrimSuffix(strings.Trim(w, "'"), "'s")
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// stop are the words a paraphrase may share with its fact.
var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an the i me my we our us you is am are was were be do does did to of in at on for from by " +
		"and or it its that this what which who whom where when how have has had can cannot not with") {
		stop[w] = true
	}
}

// same reports whether two words are one up to a plural or verb ending.
func same(a, b string) bool {
	stem := func(w string) string {
		for _, suf := range []string{"ing", "ed", "es", "s"} {
			if s, ok := strings.CutSuffix(w, suf); ok && utf8.RuneCountInString(s) >= 3 {
				w = s
				break
			}
		}
		return strings.TrimSuffix(w, "e")
	}
	return a == b || stem(a) == stem(b)
}

func TestNeedles(t *testing.T) {
	ns := Needles()
	if len(ns) != 20 {
		t.Fatalf("%d needles, want 20", len(ns))
	}
	has := func(ws []string, w string) bool {
		return slices.ContainsFunc(ws, func(x string) bool { return same(x, w) })
	}
	for k, n := range ns {
		fact, query := words(n.Fact), words(n.Query)
		if len(n.Words) == 0 || len(n.Cue) == 0 {
			t.Errorf("needle %d names no distinctive word or no cue", k)
		}
		for _, w := range n.Words {
			if !slices.Contains(fact, w) {
				t.Errorf("needle %d: %q is not a word of its fact %q", k, w, n.Fact)
			}
			if has(query, w) {
				t.Errorf("needle %d: the query %q names the fact's word %q", k, n.Query, w)
			}
		}
		for _, w := range n.Cue {
			if !has(fact, w) || !has(query, w) {
				t.Errorf("needle %d: the cue %q is not in both %q and %q", k, w, n.Fact, n.Query)
			}
		}
		for _, q := range query {
			if !stop[q] && has(fact, q) && !has(n.Cue, q) {
				t.Errorf("needle %d: the query %q shares %q with its fact, not a cue", k, n.Query, q)
			}
		}
	}
}

// vocabulary returns every word of c's files that hold no needle.
func vocabulary(c Corpus) map[string]bool {
	holds := map[string]bool{}
	for k := range needles {
		holds[c.NeedleFile(k)] = true
	}
	vocab := map[string]bool{}
	for i := range c.Len() {
		name, content := c.File(i)
		if !holds[name] {
			for _, w := range words(content) {
				vocab[w] = true
			}
		}
	}
	return vocab
}

func TestCorpusShape(t *testing.T) {
	for _, c := range []Corpus{Notes{N: 3000, Seed: testSeed}, History{M: 60, Seed: testSeed}} {
		t.Run(typeName(c), func(t *testing.T) {
			vocab := vocabulary(c)
			if len(vocab) < 2000 {
				t.Errorf("the filler has %d distinct words, want real word statistics (2,000 or more)", len(vocab))
			}
			for k, n := range needles {
				for _, w := range n.Words {
					if vocab[w] {
						t.Errorf("needle %d's word %q is in the filler", k, w)
					}
				}
				if !slices.ContainsFunc(n.Cue, func(w string) bool { return !vocab[w] }) {
					t.Errorf("needle %d: every cue of %q is in the filler", k, n.Query)
				}
				_, content := fileNamed(t, c, c.NeedleFile(k))
				if !strings.Contains(content, n.Fact) {
					t.Errorf("needle %d's file %s lacks its fact", k, c.NeedleFile(k))
				}
			}
			names := map[string]bool{}
			for i := range c.Len() {
				name, content := c.File(i)
				if names[name] {
					t.Fatalf("two files named %s", name)
				}
				names[name] = true
				if n2, c2 := c.File(i); n2 != name || c2 != content {
					t.Fatalf("file %d differs between two calls: not deterministic", i)
				}
				if strings.Contains(content, "{") || strings.Contains(content, "w1") {
					t.Fatalf("%s has an unfilled slot or a token word:\n%s", name, content)
				}
				n := utf8.RuneCountInString(content)
				switch c.(type) {
				case Notes:
					turns := strings.Count(content, "\n") - 2
					if turns < 6 || turns > 14 {
						t.Fatalf("%s has %d turns:\n%s", name, turns, content)
					}
				case History:
					if n < HistoryMaxRunes-5000 || n > HistoryMaxRunes {
						t.Fatalf("%s has %d characters", name, n)
					}
					for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
						if !strings.HasPrefix(l, "- user (") && !strings.HasPrefix(l, "- assistant (") {
							t.Fatalf("%s: not a pruned line: %q", name, l)
						}
					}
				}
			}
		})
	}
	a, _ := Notes{N: 10, Seed: 1}.File(3)
	if _, b := (Notes{N: 10, Seed: 2}).File(3); a == b {
		t.Error("another seed gives the same note")
	}
}

func typeName(c Corpus) string {
	switch c.(type) {
	case Notes:
		return "notes"
	default:
		return "history"
	}
}

func fileNamed(t *testing.T, c Corpus, name string) (int, string) {
	t.Helper()
	for i := range c.Len() {
		if n, content := c.File(i); n == name {
			return i, content
		}
	}
	t.Fatalf("no file %s", name)
	return 0, ""
}

// TestHarness loads each shape into memstore through the store and asks
// the 20 questions through search_memory, in BM25 and hybrid mode (with
// module wordvec's embedder): every needle must come back in the first 5,
// with every file scanned. This is the end-to-end path of
// BenchmarkSearchScale at a small size.
func TestHarness(t *testing.T) {
	emb, err := wordvec.New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Corpus{Notes{N: testNotes, Seed: testSeed}, History{M: testHistory, Seed: testSeed}} {
		t.Run(typeName(c), func(t *testing.T) {
			ctx := t.Context()
			d, err := memstore.New(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := store.New(d, &store.Options{Embedder: emb})
			t.Cleanup(func() { _ = s.Close() })
			if err := Load(ctx, s, Folder("kamal"), c, 4); err != nil {
				t.Fatal(err)
			}
			if err := s.WaitIndexed(ctx); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []search.Mode{search.BM25, search.Hybrid} {
				m, err := memory.New(s, &memory.Options{SearchMode: mode, Limits: memory.Limits{MaxSearchFiles: c.Len()}})
				if err != nil {
					t.Fatal(err)
				}
				for k, n := range needles {
					a, err := Ask(ctx, m, "kamal", c, k)
					if err != nil {
						t.Fatal(err)
					}
					if a.Result.Scanned != c.Len() {
						t.Errorf("%s: %q scanned %d files of %d", mode, n.Query, a.Result.Scanned, c.Len())
					}
					if !a.Found() {
						t.Errorf("%s: %q ranked %s at %d, want 1 to %d: %v", mode, n.Query, c.NeedleFile(k), a.Rank, TopK, files(a.Result))
					}
				}
			}
		})
	}
}

func files(r *memory.SearchResult) []string {
	var out []string
	for _, m := range r.Matches {
		out = append(out, m.File)
	}
	return out
}

// TestLoadStops: a write that fails stops the load with its error.
func TestLoadStops(t *testing.T) {
	d, err := memstore.New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, nil)
	defer s.Close()
	if err := Load(t.Context(), s, "bad//", Notes{N: 5, Seed: 1}, 2); err == nil || !strings.Contains(err.Error(), "note-") {
		t.Fatalf("load into an invalid folder: %v", err)
	}
}

// TestLoadDirect: a folder loaded through the driver (needles through a
// store, the rest created directly) holds every file once, as a store
// reads it, and the store finds every needle by BM25.
func TestLoadDirect(t *testing.T) {
	ctx := t.Context()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := Notes{N: testNotes, Seed: testSeed}
	s := store.New(d, nil)
	t.Cleanup(func() { _ = s.Close() })
	if err := LoadDirect(ctx, s, d, Folder("kamal"), c, 4); err != nil {
		t.Fatal(err)
	}
	paths, err := s.ListPaths(ctx, Folder("kamal"), c.Len()+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != c.Len() {
		t.Fatalf("listed %d files, want %d", len(paths), c.Len())
	}
	name, content := c.File(7)
	if f, err := s.Read(ctx, Folder("kamal")+name, 1<<20); err != nil || f.Content != content {
		t.Fatalf("read %s: %v, %+v", name, err, f)
	}
	m, err := memory.New(s, &memory.Options{SearchMode: search.BM25})
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range needles {
		a, err := Ask(ctx, m, "kamal", c, k)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Found() {
			t.Errorf("%q ranked %s at %d, want 1 to %d: %v", n.Query, c.NeedleFile(k), a.Rank, TopK, files(a.Result))
		}
	}
	// A create that fails stops the load with its error.
	if err := LoadDirect(ctx, s, d, Folder("kamal"), c, 2); err == nil || !strings.Contains(err.Error(), "note-") {
		t.Fatalf("loading the same folder twice: %v", err)
	}
}
