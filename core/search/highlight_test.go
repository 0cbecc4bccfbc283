package search

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

// marked returns the text of each of m's highlights, checking that each
// lies in the snippet and that they are in order and apart.
func marked(t *testing.T, m Match) []string {
	t.Helper()
	rs := []rune(m.Snippet)
	out := []string{}
	for i, s := range m.Highlights {
		if s.Start < 0 || s.End <= s.Start || s.End > len(rs) || (i > 0 && s.Start < m.Highlights[i-1].End) {
			t.Fatalf("%s: span %d %v outside %d runes or out of order: %v in %q", m.Path, i, s, len(rs), m.Highlights, m.Snippet)
		}
		out = append(out, string(rs[s.Start:s.End]))
	}
	return out
}

// TestHighlights: a match's highlights are rune offsets into its snippet
// of the words the ranking scored — stemmed words, variants and related
// words (BM25), each term's occurrences (literal) — whatever the text's
// script, and never a word the snippet's cut ends halve.
func TestHighlights(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor ", 20)
	cases := []struct {
		name    string
		mode    Mode
		query   string
		content string
		width   int
		snippet string // when set, the snippet wanted
		want    []string
	}{
		{name: "stemmed", mode: BM25, query: "run", content: "I am running late.", want: []string{"running"}},
		{name: "variants after multi-byte text", mode: BM25, query: "run",
			content: "Café ☕ — 日本語 — ran home, runs again, running.", want: []string{"ran", "runs", "running"}},
		{name: "a related word", mode: BM25, query: "workout", content: "Gym three evenings a week.", want: []string{"Gym"}},
		{name: "CJK", mode: BM25, query: "針", content: "糸と針 needle 針仕事", want: []string{"針", "針"}},
		{name: "by name only", mode: BM25, query: "a", content: "nothing here", want: []string{}},
		{name: "cut on both ends", mode: BM25, query: "joke", content: filler + "the running joke again" + filler, width: 40,
			want: []string{"joke"}},
		{name: "a word the cut halves", mode: BM25, query: "tea", content: "tea xxxxxxxxxxxx tea yyyyyyyyyyyyyyyyyyyy", width: 20,
			snippet: "tea xxxxxxxxxxxx ...", want: []string{"tea"}},
		{name: "literal, any case", mode: Literal, query: "TEA", content: "Green Tea, 茶, iced TEA and teapots", want: []string{"Tea", "TEA", "tea"}},
		{name: "literal terms overlapping", mode: Literal, query: "tea teapot", content: "a teapot", want: []string{"teapot"}},
		{name: "literal inside a word", mode: Literal, query: "cat", content: "Concatenate ÿcat", want: []string{"cat", "cat"}},
		{name: "literal cut", mode: Literal, query: "joke", content: filler + "the joke" + filler, width: 30, want: []string{"joke"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			width := cmp.Or(c.width, 500)
			r := Request{Prefix: "u/", Query: c.query, Mode: c.mode, Limit: 1, MaxFiles: 10, MaxChars: len("a.md") + width, MaxFileChars: 10000}
			res := rank(nil, r, Fields(strings.ToLower(c.query)), []candidate{{path: "u/a.md", content: c.content}})
			if len(res.Matches) != 1 {
				t.Fatalf("matches %+v, want u/a.md", res.Matches)
			}
			m := res.Matches[0]
			if c.snippet != "" && m.Snippet != c.snippet {
				t.Fatalf("snippet %q, want %q", m.Snippet, c.snippet)
			}
			if got := marked(t, m); !slices.Equal(got, c.want) {
				t.Fatalf("highlights %q (%v) in %q, want %q", got, m.Highlights, m.Snippet, c.want)
			}
		})
	}
}

// TestChunkWindowHighlights: a hybrid match whose snippet is its best
// chunk highlights the BM25 terms that chunk shows, not those of the
// passage BM25 would have picked.
func TestChunkWindowHighlights(t *testing.T) {
	content := "# Tea\nGreen tea, tea and more tea.\n\n# Later\nOne cup of tea a day, with lemon.\n"
	lex := bm25(nil, "u/", "tea", []candidate{{path: "u/a.md", content: content}})
	if len(lex) != 1 {
		t.Fatalf("bm25 %v", lex)
	}
	start := strings.Index(content, "# Later")
	best := chunk.Chunk{Start: start, End: len(content)} // ASCII: bytes are runes
	text, spans := chunkWindow(content, best, 30, lex[0].marks)
	got := marked(t, Match{Snippet: text, Highlights: spans})
	if !strings.Contains(text, "cup of tea") || !slices.Equal(got, []string{"tea"}) {
		t.Fatalf("chunk %q highlights %q, want its one tea", text, got)
	}
	if _, spans := chunkWindow(content, best, 30, nil); spans != nil {
		t.Fatalf("a file found by meaning alone: %v, want no highlight", spans)
	}
}

// TestHighlightsProperty: over random notes and queries in each mode
// (hybrid through the engine, with the term index), every highlight lies
// in its snippet and covers a word the query matched: a term the BM25
// query scores (its words, variants, related words), or literal terms.
func TestHighlightsProperty(t *testing.T) {
	vocab := []string{"run", "running", "runs", "ran", "runner", "café", "naïve", "日本", "tea", "teapot", "gym",
		"workout", "fitness", "zebra", "x", "the", "ÿes", "—", "👟", "Tea", "RUN"}
	rng := rand.New(rand.NewPCG(38, 1))
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	sc := lexis.NewScanner()
	check := func(t *testing.T, mode Mode, query string, m Match) {
		t.Helper()
		bq := newBM25Query(sc, query, nil)
		terms := Fields(strings.ToLower(query))
		for _, w := range marked(t, m) {
			if mode == Literal || bq == nil {
				low := strings.ToLower(w)
				if !slices.ContainsFunc(terms, func(t string) bool { return strings.HasPrefix(low, t) }) ||
					!slices.ContainsFunc(terms, func(t string) bool { return strings.HasSuffix(low, t) }) {
					t.Fatalf("%s %q: highlight %q of %q is no literal term", mode, query, w, m.Snippet)
				}
				continue
			}
			var got []string
			sc.Each(w, func(term string, _, _ int) { got = append(got, term) })
			if _, ok := bq.slots[strings.Join(got, " ")]; len(got) != 1 || !ok {
				t.Fatalf("%s %q: highlight %q (terms %q) of %q is no word the query scores", mode, query, w, got, m.Snippet)
			}
		}
	}
	for i := range 300 {
		var cands []candidate
		for k := range 1 + rng.IntN(6) {
			cands = append(cands, candidate{path: fmt.Sprintf("u/n%d.md", k), content: words(1 + rng.IntN(60))})
		}
		query := words(1 + rng.IntN(3))
		for _, mode := range []Mode{BM25, Literal} {
			r := Request{Prefix: "u/", Query: query, Mode: mode, Limit: 5, MaxFiles: 10, MaxChars: 20 + rng.IntN(400), MaxFileChars: 10000}
			res := rank(nil, r, Fields(strings.ToLower(query)), cands)
			for _, m := range res.Matches {
				check(t, mode, query, m)
			}
		}
		if i%10 != 0 {
			continue
		}
		d := &nnDriver{rows: map[string]driver.File{}}
		s := newTestStore(d, &Options{Embedder: nnEmbedder{}})
		for _, c := range cands {
			mustWrite(t, s, "x/"+c.path, c.content)
		}
		res := mustSearch(t, s, Request{Prefix: "x/u/", Query: query, Mode: Hybrid, Limit: 5, MaxFiles: 10, MaxChars: 20 + rng.IntN(400), MaxFileChars: 10000})
		for _, m := range append(res.Matches, res.Related...) {
			check(t, Hybrid, query, m)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
