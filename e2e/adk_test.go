package e2e_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// TestADKEndToEnd drives a real Google ADK runner, with a scripted model
// (no network), against every backend in both of the suite's modes.
func TestADKEndToEnd(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "adk_end_to_end", Run: adkEndToEnd})
	}
}

const (
	e2eApp      = "agentmem-e2e"
	e2eFact     = "- moved to Hanoi; hates early flights"
	e2eRemember = "I moved to Hanoi and hate early flights"
	e2eBook     = "Book me something to Bangkok"
	e2eAsk      = "What do you know about me?"
	e2eCallID   = "call-remember"
)

// adkEndToEnd: run 1, user kamal tells a fact and the model calls
// write_memory (then replays the same call); run 2, in a new session, the
// model's first request carries the injected block with the fact beside
// the prompt; user ana sees none of it, neither injected nor through the
// tools; a replay of run 1's tool call writes nothing.
func adkEndToEnd(t *testing.T, e *contract.Env) {
	mem, err := memory.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeArgs := map[string]any{"content": e2eFact, "file": nil, "old_text": nil}
	llm := adktest.NewModel(map[string][]adktest.Step{
		e2eRemember: {
			adktest.Call(e2eCallID, "write_memory", writeArgs),
			adktest.Call(e2eCallID, "write_memory", writeArgs), // the same call again: a replay
			adktest.Text("Noted: Hanoi, and no early flights."),
		},
		e2eBook: {adktest.Text("Here is a late-morning flight to Bangkok.")},
		e2eAsk: {
			adktest.Call("call-search", "search_memory", map[string]any{"query": "Hanoi flights"}),
			adktest.Call("call-read", "read_memory", map[string]any{"file": "MEMORY.md"}),
			adktest.Text("Nothing yet."),
		},
	})
	a, err := llmagent.New(llmagent.Config{
		Name: "travel_agent", Model: llm, Instruction: "You book travel.",
		Toolsets: []tool.Toolset{agentmemadk.NewToolset(mem, nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: e2eApp, Agent: a, SessionService: sessions, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	run := func(user, sessionID, prompt string) {
		t.Helper()
		for _, err := range r.Run(ctx(t), user, sessionID, genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("%s: %q: %v", user, prompt, err)
			}
		}
	}

	// Run 1: kamal's fact is written once, the repeated call replayed.
	run("kamal", "kamal-1", e2eRemember)
	reqs := llm.Requests()
	eq(t, "run 1 model requests", len(reqs), 3)
	first := adktest.FunctionResponse(reqs[1].LLMRequest, e2eCallID)
	again := adktest.FunctionResponse(reqs[2].LLMRequest, e2eCallID)
	if first["status"] != "created" || first["replayed"] != false || again["replayed"] != true || again["version"] != first["version"] {
		t.Fatalf("write_memory results: %v then %v", first, again)
	}
	f := read(t, e.Store, "kamal/main/MEMORY.md", 1000)
	if f == nil || f.Content != e2eFact+"\n" {
		t.Fatalf("kamal/main/MEMORY.md = %+v", f)
	}

	// A durable replay of run 1's tool call (same invocation id, function
	// call id and arguments) returns the original result and writes nothing.
	invocation := invocationOf(t, sessions, "kamal", "kamal-1")
	args, _ := json.Marshal(writeArgs)
	res, err := mem.Call(ctx(t), memory.Invocation{Namespace: "kamal", RunID: invocation, ToolCallID: e2eCallID},
		"write_memory", args)
	if w, ok := res.(*memory.WriteResult); err != nil || !ok || !w.Replayed || w.Version != first["version"] {
		t.Fatalf("replayed tool call: %#v, %v", res, err)
	}
	eq(t, "MEMORY.md after replays", read(t, e.Store, "kamal/main/MEMORY.md", 1000).Content, e2eFact+"\n")

	// Run 2, new session: the first request already carries the fact.
	run("kamal", "kamal-2", e2eBook)
	req := llm.Requests()[3]
	eq(t, "run 2 user", req.UserID, "kamal")
	blocks := adktest.MemoryBlocks(req.LLMRequest)
	if len(blocks) != 1 || !strings.HasPrefix(blocks[0], memory.BlockOpen) || !strings.HasSuffix(blocks[0], memory.BlockClose) ||
		!strings.Contains(blocks[0], e2eFact) {
		t.Fatalf("run 2 memory blocks %q", blocks)
	}
	last := req.Contents[len(req.Contents)-1]
	if last.Role != genai.RoleUser || !slices.ContainsFunc(last.Parts, func(p *genai.Part) bool { return p.Text == e2eBook }) ||
		last.Parts[len(last.Parts)-1].Text != blocks[0] {
		t.Fatalf("block is not beside the prompt: %+v", last.Parts)
	}
	if sys := adktest.SystemText(req.LLMRequest); !strings.Contains(sys, mem.Instructions()) || strings.Contains(sys, "Hanoi") {
		t.Fatalf("system instruction %q", sys)
	}
	eq(t, "tools", strings.Join(adktest.ToolNames(req.LLMRequest), ","), "write_memory,read_memory,delete_memory,search_memory")

	// ana: nothing injected, nothing found, nothing readable, nothing stored.
	run("ana", "ana-1", e2eBook)
	run("ana", "ana-2", e2eAsk)
	for _, req := range llm.Requests()[4:] {
		eq(t, "user", req.UserID, "ana")
		if b := adktest.MemoryBlocks(req.LLMRequest); len(b) != 0 {
			t.Fatalf("ana's request carries %q", b)
		}
		if leaks(req.LLMRequest, "Hanoi") {
			t.Fatal("ana's request mentions kamal's memory")
		}
	}
	reqs = llm.Requests()
	search := adktest.FunctionResponse(reqs[6].LLMRequest, "call-search")
	if m, _ := search["matches"].([]any); search == nil || len(m) != 0 {
		t.Fatalf("ana's search: %v", search)
	}
	readRes := adktest.FunctionResponse(reqs[7].LLMRequest, "call-read")
	if msg, _ := readRes["error"].(string); !strings.Contains(msg, "no memory file") || strings.Contains(msg, "Hanoi") {
		t.Fatalf("ana's read: %v", readRes)
	}
	if p := list(t, e.Store, "ana/", 10); len(p) != 0 {
		t.Fatalf("ana has files %v", p)
	}
	if _, err := e.Store.Read(ctx(t), "ana/main/MEMORY.md", 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ana's notebook: %v", err)
	}
	eqSlice(t, "kamal's files", list(t, e.Store, "kamal/", 10), []string{"kamal/main/MEMORY.md"})
}

// invocationOf returns the invocation id of the session's tool call.
func invocationOf(t *testing.T, sessions session.Service, user, id string) string {
	t.Helper()
	got, err := sessions.Get(ctx(t), &session.GetRequest{AppName: e2eApp, UserID: user, SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range got.Session.Events().All() {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if p.FunctionCall != nil && p.FunctionCall.ID == e2eCallID && ev.InvocationID != "" {
				return ev.InvocationID
			}
		}
	}
	t.Fatal("no tool call in the session")
	return ""
}

// leaks reports whether s appears in the request's system instruction,
// text or function responses (the model's own function calls excepted).
func leaks(req *model.LLMRequest, s string) bool {
	if strings.Contains(adktest.SystemText(req), s) {
		return true
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if strings.Contains(p.Text, s) {
				return true
			}
			if p.FunctionResponse != nil {
				b, _ := json.Marshal(p.FunctionResponse.Response)
				if strings.Contains(string(b), s) {
					return true
				}
			}
		}
	}
	return false
}
