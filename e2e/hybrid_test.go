package e2e_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestADKHybridSearch drives a Google ADK runner, with a scripted model,
// whose search_memory call paraphrases a note: hybrid search (the default
// once the store has an embedder) finds it, BM25 alone cannot. On every
// backend in both of the suite's modes.
func TestADKHybridSearch(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "adk_hybrid_search", Run: adkHybridSearch})
	}
}

// hybridE2ENotes share no word with hybridE2EQuery but "commute.md"
// shares its meaning (contract.FakeEmbedder's synonyms: automobile,
// sedan, drive).
var hybridE2ENotes = map[string]string{
	"commute.md": "- Drives a sedan to the office and parks on level 2.\n",
	"pets.md":    "- Has a kitten called Miso who sleeps on the sofa.\n",
	"health.md":  "- Sees the physician every March for a check-up.\n",
}

const (
	hybridE2EQuery  = "which automobile do I own"
	hybridE2EPrompt = "Remind me what I own"
)

func adkHybridSearch(t *testing.T, e *contract.Env) {
	opts := e.Options()
	opts.Embedder = &contract.FakeEmbedder{}
	s := e.NewStore(t, opts, nil)
	t.Cleanup(func() { _ = s.Close() })
	for name, c := range hybridE2ENotes {
		if _, err := s.Write(ctx(t), store.WriteRequest{Path: "kamal/main/" + name, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WaitIndexed(ctx(t)); err != nil {
		t.Fatal(err)
	}
	find := func(mode search.Mode) []string {
		t.Helper()
		mem, err := memory.New(s, &memory.Options{SearchMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		llm := adktest.NewModel(map[string][]adktest.Step{
			hybridE2EPrompt: {
				adktest.Call("call-search", "search_memory", map[string]any{"query": hybridE2EQuery}),
				adktest.Text("You drive a sedan."),
			},
		})
		a, err := llmagent.New(llmagent.Config{
			Name: "assistant", Model: llm, Instruction: "You help.",
			Toolsets: []tool.Toolset{agentmemadk.NewToolset(mem, nil)},
		})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{AppName: e2eApp, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range r.Run(ctx(t), "kamal", "kamal-"+string(mode), genai.NewContentFromText(hybridE2EPrompt, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
		}
		reqs := llm.Requests()
		eq(t, string(mode)+" model requests", len(reqs), 2)
		res := adktest.FunctionResponse(reqs[1].LLMRequest, "call-search")
		var got struct {
			Matches []struct {
				File string `json:"file"`
			} `json:"matches"`
		}
		b, _ := json.Marshal(res)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: search_memory returned %v", mode, res)
		}
		var files []string
		for _, m := range got.Matches {
			files = append(files, m.File)
		}
		return files
	}
	if got := find(""); len(got) == 0 || got[0] != "commute.md" {
		t.Fatalf("hybrid search_memory(%q) = %q, want commute.md first", hybridE2EQuery, got)
	}
	for _, f := range find(search.BM25) {
		if f == "commute.md" {
			t.Fatalf("BM25 alone found commute.md for %q: the case no longer tells hybrid from BM25", hybridE2EQuery)
		}
	}
}
