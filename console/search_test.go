package console

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// meaningEmbedder embeds a text as the vector of the one word of it that
// it knows (each text holds at most one), else as far as it gets from a
// quixle: a question about a quixle has notes close in meaning that stand
// out too little to be matches.
type meaningEmbedder map[string][]float32

func (meaningEmbedder) Model() string { return "meaning" }

func (m meaningEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{0, 1}
		for w, v := range m {
			if strings.Contains(t, w) {
				out[i] = v
			}
		}
	}
	return out, nil
}

var quixles = meaningEmbedder{"quixle": {1, 0}, "zorblat": {0.11, 1},
	"alpha": {0, 1}, "bravo": {0.02, 1}, "charlie": {0.04, 1}, "delta": {0.06, 1}, "echo": {0.08, 1}, "foxtrot": {0.1, 1}}

// quixleEnv serves alice's notebook of seven notes, one about a zorblat,
// with the notebook's max_files at maxFiles.
func quixleEnv(t *testing.T, maxFiles int) *env {
	s := store.New(newMemDriver(t), &store.Options{Embedder: quixles})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, &Options{Memory: &memory.Options{Limits: memory.Limits{MaxSearchFiles: maxFiles}}})
	for i, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: fmt.Sprintf("alice/main/n%d.md", i), Content: "Weather report " + w + "."}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "alice/main/z.md", Content: "The zorblat is parked behind the garage."}); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSearchRelatedAndFallback: the API's search returns the files close
// in meaning to a query no note shares a word with as related (only
// then), and says why it scanned instead of answering from the index.
func TestSearchRelatedAndFallback(t *testing.T) {
	e := quixleEnv(t, 1000)
	res := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=where+is+my+quixle", key: "alice-key"}).want(200, "").json()
	related, _ := res["related"].([]any)
	if ms := res["matches"].([]any); len(ms) != 0 || len(related) == 0 || related[0].(map[string]any)["path"] != "main/z.md" {
		t.Fatalf("no word in common: %v; want no match, main/z.md first of the related", res)
	}
	if _, ok := res["fallback"]; ok {
		t.Fatalf("a small folder is indexed by its first search: %v", res)
	}
	res = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=zorblat+garage", key: "alice-key"}).want(200, "").json()
	if _, ok := res["related"]; ok || len(res["matches"].([]any)) == 0 {
		t.Fatalf("a match: %v; want matches and no related", res)
	}

	e = quixleEnv(t, 3) // larger than max_files: its index is built in the background
	res = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=weather", key: "alice-key"}).want(200, "").json()
	if res["fallback"] != search.FallbackBuilding || res["truncated"] != true {
		t.Fatalf("while the index is built: %v; want fallback %q, truncated", res, search.FallbackBuilding)
	}
	for _, want := range []any{search.FallbackVectors, nil} { // then the vector cache, then neither
		if err := e.s.WaitIndexed(t.Context()); err != nil {
			t.Fatal(err)
		}
		res = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=weather", key: "alice-key"}).want(200, "").json()
		if res["fallback"] != want || res["scanned"] != float64(7) {
			t.Fatalf("indexed: %v; want fallback %v, 7 files covered", res, want)
		}
	}
}

// TestSearchPageSaysNoMatch: the search page says plainly that no note
// matches, lists the notes close in meaning under their own heading, and
// shows why the search scanned.
func TestSearchPageSaysNoMatch(t *testing.T) {
	e := quixleEnv(t, 1000)
	sid := e.signIn("alice-key")
	get := func(q string) string {
		t.Helper()
		w := e.page(pageReq{method: "GET", target: "/ns/alice/search?q=" + url.QueryEscape(q), cookie: sid})
		if w.Code != http.StatusOK {
			t.Fatalf("%q: %d %s", q, w.Code, w.Body)
		}
		return html.UnescapeString(w.Body.String())
	}
	body := get("where is my quixle")
	for _, want := range []string{"No note matches “where is my quixle”", "Close in meaning (no word in common)", "main/z.md"} {
		if !strings.Contains(body, want) {
			t.Errorf("no match: the page lacks %q:\n%s", want, body)
		}
	}
	body = get("zorblat garage")
	if !strings.Contains(body, "main/z.md") || strings.Contains(body, "No note matches") || strings.Contains(body, "Close in meaning") {
		t.Errorf("a match: the page says no match or lists related notes:\n%s", body)
	}
	if strings.Contains(body, "Not answered from the search index") {
		t.Errorf("an indexed search shows a fallback note:\n%s", body)
	}

	e = quixleEnv(t, 3)
	sid = e.signIn("alice-key")
	if body = get("weather"); !strings.Contains(body, "Not answered from the search index: "+search.FallbackBuilding) {
		t.Errorf("while the index is built, the page lacks the fallback note:\n%s", body)
	}
}

// TestSearchHighlights: the API's search says where each snippet shows the
// query's words (character offsets, multi-byte text before them), and the
// search page puts exactly those words in <mark>, the note's own markup
// escaped, under the strict CSP.
func TestSearchHighlights(t *testing.T) {
	e := newEnv(t)
	e.write("alice/main/runs.md", "Café ☕ <b>notes</b>: I was running <script>alert(1)</script> at dawn.\n", nil)
	res := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=run", key: "alice-key"}).want(200, "").json()
	ms := res["matches"].([]any)
	if len(ms) != 1 {
		t.Fatalf("matches %v, want main/runs.md", res)
	}
	m := ms[0].(map[string]any)
	snippet := []rune(m["snippet"].(string))
	var words []string
	for _, h := range m["highlights"].([]any) {
		span := h.(map[string]any)
		words = append(words, string(snippet[int(span["start"].(float64)):int(span["end"].(float64))]))
	}
	if !slices.Equal(words, []string{"running"}) {
		t.Fatalf("highlights %v of %q: %q, want running", m["highlights"], string(snippet), words)
	}

	sid := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/search?q=run", cookie: sid})
	if w.Code != http.StatusOK || w.Header().Get("Content-Security-Policy") != contentSecurityPolicy {
		t.Fatalf("search page: %d, CSP %q", w.Code, w.Header().Get("Content-Security-Policy"))
	}
	body := w.Body.String()
	want := `<pre class="snippet">Café ☕ &lt;b&gt;notes&lt;/b&gt;: I was <mark>running</mark> &lt;script&gt;alert(1)&lt;/script&gt; at dawn.` + "\n</pre>"
	if !strings.Contains(body, want) || strings.Count(body, "<mark>") != 1 || strings.Contains(body, "<script>alert") {
		t.Fatalf("search page: want the snippet\n%s\nin\n%s", want, body)
	}

	// No highlight (a match by name alone): the snippet as it is.
	e.write("alice/main/xqv.md", "Out <i>early</i>.\n", nil)
	body = e.page(pageReq{method: "GET", target: "/ns/alice/search?q=xqv", cookie: sid}).Body.String()
	if !strings.Contains(body, `<pre class="snippet">Out &lt;i&gt;early&lt;/i&gt;.`+"\n</pre>") || strings.Contains(body, "<mark>") {
		t.Fatalf("a match by name: want the snippet unmarked in\n%s", body)
	}
}

// TestPieces: a snippet cut at its highlights, one out of range or out of
// order shown unmarked.
func TestPieces(t *testing.T) {
	for _, c := range []struct {
		snippet string
		hs      []SpanJSON
		want    []piece
	}{
		{"日本 tea", []SpanJSON{{3, 6}}, []piece{{"日本 ", false}, {"tea", true}}},
		{"tea", []SpanJSON{{0, 3}}, []piece{{"tea", true}}},
		{"a b", nil, []piece{{"a b", false}}},
		{"a b c", []SpanJSON{{2, 3}, {0, 1}, {4, 9}, {3, 3}}, []piece{{"a ", false}, {"b", true}, {" c", false}}},
		{"", nil, nil},
	} {
		if got := pieces(c.snippet, c.hs); !slices.Equal(got, c.want) {
			t.Errorf("pieces(%q, %v) = %v, want %v", c.snippet, c.hs, got, c.want)
		}
	}
}
