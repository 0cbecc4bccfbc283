package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
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
		for _, mode := range []store.SearchMode{"", store.SearchLiteral, store.SearchBM25, store.SearchHybrid} {
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
