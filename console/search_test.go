package console

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
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
