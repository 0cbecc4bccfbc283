package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/wordvec"
)

// TestSearchJSONIsSearchMemory: `agentmem search --json PREFIX QUERY`
// prints exactly what the notebook's search_memory returns for that scope
// (what serve's MCP clients get), in every mode, with the CLI's default
// embedder.
func TestSearchJSONIsSearchMemory(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "m.db")
	emb, err := wordvec.New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(t.Context(), url, &store.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, c := range map[string]string{
		"kamal/main/MEMORY.md":    "- lives in Hanoi\n- drinks green tea every morning\n",
		"kamal/main/travel.md":    "# Trains\n\nPrefers night trains to early flights.\n",
		"kamal/main/work.md":      "Works as a nurse at the city hospital.\n",
		"kamal/other/x.md":        "tea in another agent's scope\n",
		"team/ana/main/MEMORY.md": "- allergic to peanuts\n",
	} {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WaitIndexed(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prefix, ns, agent, query string }{
		{"kamal/main/", "kamal", "main", "what does he drink in the morning"},
		{"kamal/main", "kamal", "main", "railway"},
		{"kamal/other/", "kamal", "other", "tea"},
		{"team/ana/main/", "team/ana", "main", "peanut allergy"},
	} {
		for _, mode := range []search.Mode{"", search.Literal, search.BM25, search.Hybrid} {
			m, err := memory.New(s, &memory.Options{AgentName: c.agent, SearchMode: mode})
			if err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"query": c.query})
			res, err := m.Call(t.Context(), memory.Invocation{Namespace: c.ns}, memory.SearchTool, args)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(res)

			a, out, errOut := testApp()
			argv := []string{"--store", url, "search", "--json", c.prefix, c.query}
			if mode != "" {
				argv = append(argv, "--mode", string(mode))
			}
			if code := a.run(t.Context(), argv); code != exitOK {
				t.Fatalf("%v: exit %d: %s", argv, code, errOut)
			}
			if got := strings.TrimSuffix(out.String(), "\n"); got != string(want) {
				t.Errorf("%v printed\n%s\nsearch_memory returns\n%s", argv, got, want)
			}
		}
	}
}

// nearEmbedder gives "quixle" one direction, "note N" (N a digit) a
// little towards it, the more for a greater N, and any other text (the
// zorblat) a little more: a question about a quixle has files close in
// meaning that stand out too little to be matches.
type nearEmbedder struct{}

func (nearEmbedder) Model() string { return "near-1" }

func (nearEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for _, t := range texts {
		if strings.Contains(t, "quixle") {
			out = append(out, []float32{1, 0})
			continue
		}
		toward := float32(0.11)
		if i := strings.Index(t, "note "); i >= 0 && i+5 < len(t) {
			toward = 0.02 * float32(t[i+5]-'0')
		}
		out = append(out, []float32{toward, 1})
	}
	return out, nil
}

// TestSearchIsTheStoresRecursiveSearch: `agentmem search PREFIX QUERY`
// (its printing, on a store with a test embedder) prints the store's
// recursive search (every folder under PREFIX, one
// budget): its matches, or, when none, the files close in meaning under
// "no match; close in meaning:", and on stderr why it scanned.
func TestSearchIsTheStoresRecursiveSearch(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "m.db")
	s, err := store.Open(t.Context(), url, &store.Options{Embedder: nearEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, folder := range []string{"kamal/main/", "kamal/main/old/", "kamal/notes/"} {
		for n := range 6 {
			if _, err := s.Write(t.Context(), store.WriteRequest{Path: fmt.Sprintf("%sn%d.md", folder, n), Content: fmt.Sprintf("A note %d about the weather in Hanoi.", n)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: folder + "z.md", Content: "The zorblat is parked behind the garage."}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WaitIndexed(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query, mode string
		related     bool   // nothing matches, some files are close in meaning
		stderr      string // a line stderr must have
	}{
		{"garage weather", "", false, ""},
		{"where is my quixle", "", true, `no match: 21 files scored under "kamal/"`},
		{"weather", "literal", false, "(" + search.FallbackLiteral + ")"},
	} {
		req := search.Request{Prefix: "kamal/", Query: c.query, Mode: search.Mode(c.mode), Recursive: true, Limit: 4, MaxFiles: 1000, MaxChars: 8000, MaxFileChars: 65536}
		res, err := s.Search(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		printMatches(&want, res.Matches)
		if c.related != (len(res.Matches) == 0 && len(res.Related) > 0) {
			t.Fatalf("%q: the store returned matches %+v, related %+v", c.query, res.Matches, res.Related)
		}
		if c.related {
			want.WriteString("no match; close in meaning:\n")
			printMatches(&want, res.Related)
		}
		a, out, errOut := testApp()
		req.Recursive = false
		if err := a.search(t.Context(), s, req); err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		if out.String() != want.String() {
			t.Errorf("%q printed\n%s\nthe store's recursive search is\n%s", c.query, out, &want)
		}
		if c.stderr != "" && !slices.Contains(strings.Split(errOut.String(), "\n"), c.stderr) {
			t.Errorf("%q: stderr %q lacks the line %q", c.query, errOut, c.stderr)
		}
	}
}

// TestSearchRecencyFlag: --recency reaches the search: the files written
// a while ago drop below an equal file written since, with --json as
// search_memory with SearchRecencyHalfLife; a negative half-life is a
// usage error.
func TestSearchRecencyFlag(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "m.db")
	s, err := store.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"kamal/main/a.md", "kamal/main/b.md"} {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: "- drinks green tea\n"}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := memory.New(s, &memory.Options{SearchRecencyHalfLife: 168 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"query": "tea"})
	res, err := m.Call(t.Context(), memory.Invocation{Namespace: "kamal"}, memory.SearchTool, args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(res)
	a, out, errOut := testApp()
	if code := a.run(t.Context(), []string{"--store", url, "--embedder", "none", "search", "--json", "--recency", "168h", "kamal/main/", "tea"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != string(want) {
		t.Errorf("--recency 168h printed\n%s\nsearch_memory returns\n%s", got, want)
	}
	a, _, errOut = testApp()
	if code := a.run(t.Context(), []string{"--store", url, "search", "--recency", "-1h", "kamal/", "tea"}); code != exitUsage || !strings.Contains(errOut.String(), "--recency") {
		t.Errorf("--recency -1h: exit %d, %q; want %d naming --recency", code, errOut.String(), exitUsage)
	}
}
