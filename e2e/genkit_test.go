package e2e_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemgenkit "github.com/agentmem/agentmem/genkit"
	"github.com/agentmem/agentmem/genkit/genkittest"
)

// TestGenkitEndToEnd drives real genkit.Generate calls, with a scripted
// model (no network), against every backend in both of the suite's modes.
func TestGenkitEndToEnd(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "genkit_end_to_end", Run: genkitEndToEnd})
	}
}

// genkitEndToEnd: the same story as adkEndToEnd, on Genkit.
func genkitEndToEnd(t *testing.T, e *contract.Env) {
	mem, err := memory.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(ctx(t))
	nb, err := agentmemgenkit.Define(g, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeArgs := map[string]any{"content": e2eFact, "file": nil, "old_text": nil}
	llm := genkittest.Define(g, "e2e/scripted", map[string][]genkittest.Step{
		e2eRemember: {
			genkittest.Call(e2eCallID, "write_memory", writeArgs),
			genkittest.Call(e2eCallID, "write_memory", writeArgs), // the same call again: a replay
			genkittest.Answer("Noted: Hanoi, and no early flights."),
		},
		e2eBook: {genkittest.Answer("Here is a late-morning flight to Bangkok.")},
		e2eAsk: {
			genkittest.Call("call-search", "search_memory", map[string]any{"query": "Hanoi flights"}),
			genkittest.Call("call-read", "read_memory", map[string]any{"file": "MEMORY.md"}),
			genkittest.Answer("Nothing yet."),
		},
	})
	run := func(user, runID, prompt string) {
		t.Helper()
		c := memory.WithUserID(ctx(t), user)
		if runID != "" {
			c = memory.WithRunID(c, runID)
		}
		resp, err := genkit.Generate(c, g, ai.WithModel(llm), ai.WithSystem("You book travel."), ai.WithPrompt(prompt),
			ai.WithTools(nb.Tools()...), ai.WithUse(nb))
		if err != nil {
			t.Fatalf("%s: %q: %v", user, prompt, err)
		}
		for _, m := range resp.History() {
			if len(genkittest.MemoryBlocks([]*ai.Message{m})) != 0 {
				t.Fatalf("%s: history carries a memory block", user)
			}
		}
	}

	// Run 1: kamal's fact is written once, the repeated call replayed.
	run("kamal", "kamal-run-1", e2eRemember)
	reqs := llm.Requests()
	eq(t, "run 1 model requests", len(reqs), 3)
	first := genkittest.ToolResponse(reqs[1].Messages, e2eCallID)
	again := genkittest.ToolResponse(reqs[2].Messages[len(reqs[2].Messages)-1:], e2eCallID)
	if first["status"] != "created" || first["replayed"] != false || again["replayed"] != true || again["version"] != first["version"] {
		t.Fatalf("write_memory results: %v then %v", first, again)
	}
	f := read(t, e.Store, "kamal/main/MEMORY.md", 1000)
	if f == nil || f.Content != e2eFact+"\n" {
		t.Fatalf("kamal/main/MEMORY.md = %+v", f)
	}

	// A durable replay of run 1's tool call (same run id, ref and
	// arguments) returns the original result and writes nothing.
	args, _ := json.Marshal(writeArgs)
	res, err := mem.Call(ctx(t), memory.Invocation{Namespace: "kamal", RunID: "kamal-run-1", ToolCallID: e2eCallID}, "write_memory", args)
	if w, ok := res.(*memory.WriteResult); err != nil || !ok || !w.Replayed || w.Version != first["version"] {
		t.Fatalf("replayed tool call: %#v, %v", res, err)
	}
	eq(t, "MEMORY.md after replays", read(t, e.Store, "kamal/main/MEMORY.md", 1000).Content, e2eFact+"\n")

	// Run 2, a new conversation: the first request already carries the
	// fact, beside the prompt.
	run("kamal", "", e2eBook)
	req := llm.Requests()[3]
	blocks := genkittest.MemoryBlocks(req.Messages)
	if len(blocks) != 1 || !strings.HasSuffix(blocks[0], memory.BlockClose) || !strings.Contains(blocks[0], e2eFact) {
		t.Fatalf("run 2 memory blocks %q", blocks)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != ai.RoleUser || len(last.Content) != 2 || last.Content[0].Text != e2eBook || last.Content[1].Text != blocks[0] {
		t.Fatalf("block is not beside the prompt: %q", genkittest.Text(last))
	}
	if sys := genkittest.Text(req.Messages[0]); req.Messages[0].Role != ai.RoleSystem || !strings.Contains(sys, mem.Instructions()) || strings.Contains(sys, "Hanoi") {
		t.Fatalf("system message %q", sys)
	}
	eqSlice(t, "tools", slices.Sorted(slices.Values(genkittest.ToolNames(req))), []string{"delete_memory", "read_memory", "search_memory", "write_memory"})

	// ana: nothing injected, nothing found, nothing readable, nothing stored.
	run("ana", "", e2eBook)
	run("ana", "", e2eAsk)
	reqs = llm.Requests()
	for _, req := range reqs[4:] {
		if b := genkittest.MemoryBlocks(req.Messages); len(b) != 0 {
			t.Fatalf("ana's request carries %q", b)
		}
		for _, m := range req.Messages {
			if m.Role != ai.RoleModel && strings.Contains(genkittest.Text(m), "Hanoi") {
				t.Fatalf("ana's request mentions kamal's memory: %q", genkittest.Text(m))
			}
		}
	}
	if m, _ := genkittest.ToolResponse(reqs[6].Messages, "call-search")["matches"].([]any); len(m) != 0 {
		t.Fatalf("ana's search: %v", m)
	}
	if msg, _ := genkittest.ToolResponse(reqs[7].Messages, "call-read")["error"].(string); !strings.Contains(msg, "no memory file") || strings.Contains(msg, "Hanoi") {
		t.Fatalf("ana's read: %q", msg)
	}
	if p := list(t, e.Store, "ana/", 10); len(p) != 0 {
		t.Fatalf("ana has files %v", p)
	}
	if _, err := e.Store.Read(ctx(t), "ana/main/MEMORY.md", 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ana's notebook: %v", err)
	}
	eqSlice(t, "kamal's files", list(t, e.Store, "kamal/", 10), []string{"kamal/main/MEMORY.md"})
}
