package e2e_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemeino "github.com/agentmem/agentmem/eino"
	"github.com/agentmem/agentmem/eino/einotest"
)

// TestEinoEndToEnd drives a real Eino ChatModelAgent and Runner, with a
// scripted model (no network), against every backend in both of the
// suite's modes.
func TestEinoEndToEnd(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "eino_end_to_end", Run: einoEndToEnd})
	}
}

// einoEndToEnd: the same story as adkEndToEnd, on Eino.
func einoEndToEnd(t *testing.T, e *contract.Env) {
	mem, err := memory.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeArgs := map[string]any{"content": e2eFact, "file": nil, "old_text": nil}
	llm := einotest.NewModel(map[string][]einotest.Step{
		e2eRemember: {
			einotest.Call(e2eCallID, "write_memory", writeArgs),
			einotest.Call(e2eCallID, "write_memory", writeArgs), // the same call again: a replay
			einotest.Text("Noted: Hanoi, and no early flights."),
		},
		e2eBook: {einotest.Text("Here is a late-morning flight to Bangkok.")},
		e2eAsk: {
			einotest.Call("call-search", "search_memory", map[string]any{"query": "Hanoi flights"}),
			einotest.Call("call-read", "read_memory", map[string]any{"file": "MEMORY.md"}),
			einotest.Text("Nothing yet."),
		},
	})
	mw, err := agentmemeino.NewMiddleware(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(ctx(t), &adk.ChatModelAgentConfig{
		Name: "travel_agent", Description: "books travel", Instruction: "You book travel.", Model: llm,
		Handlers: []adk.ChatModelAgentMiddleware{mw},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx(t), adk.RunnerConfig{Agent: a})
	run := func(user, runID, prompt string) {
		t.Helper()
		c := memory.WithUserID(ctx(t), user)
		if runID != "" {
			c = memory.WithRunID(c, runID)
		}
		iter := r.Run(c, []*schema.Message{schema.UserMessage(prompt)})
		for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
			if ev.Err != nil {
				t.Fatalf("%s: %q: %v", user, prompt, ev.Err)
			}
		}
	}
	result := func(msgs []*schema.Message, id string) map[string]any {
		t.Helper()
		var out map[string]any
		if err := json.Unmarshal([]byte(einotest.ToolResult(msgs, id)), &out); err != nil {
			t.Fatalf("tool result %s: %v", id, err)
		}
		return out
	}

	// Run 1: kamal's fact is written once, the repeated call replayed.
	run("kamal", "kamal-run-1", e2eRemember)
	reqs := llm.Requests()
	eq(t, "run 1 model requests", len(reqs), 3)
	first := result(reqs[1].Messages, e2eCallID)
	again := result(reqs[2].Messages[len(reqs[2].Messages)-1:], e2eCallID)
	if first["status"] != "created" || first["replayed"] != false || again["replayed"] != true || again["version"] != first["version"] {
		t.Fatalf("write_memory results: %v then %v", first, again)
	}
	f := read(t, e.Store, "kamal/main/MEMORY.md", 1000)
	if f == nil || f.Content != e2eFact+"\n" {
		t.Fatalf("kamal/main/MEMORY.md = %+v", f)
	}

	// A durable replay of run 1's tool call (same run id, tool-call id and
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
	blocks := einotest.MemoryBlocks(req.Messages)
	if len(blocks) != 1 || !strings.HasSuffix(blocks[0], memory.BlockClose) || !strings.Contains(blocks[0], e2eFact) {
		t.Fatalf("run 2 memory blocks %q", blocks)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != schema.User || last.Content != e2eBook+"\n\n"+blocks[0] {
		t.Fatalf("block is not beside the prompt: %q", last.Content)
	}
	if sys := req.Messages[0]; sys.Role != schema.System || !strings.Contains(sys.Content, mem.Instructions()) || strings.Contains(sys.Content, "Hanoi") {
		t.Fatalf("system message %q", sys.Content)
	}
	eq(t, "tools", strings.Join(einotest.ToolNames(req.Tools), ","), "write_memory,read_memory,delete_memory,search_memory")

	// ana: nothing injected, nothing found, nothing readable, nothing stored.
	run("ana", "", e2eBook)
	run("ana", "", e2eAsk)
	reqs = llm.Requests()
	for _, req := range reqs[4:] {
		if b := einotest.MemoryBlocks(req.Messages); len(b) != 0 {
			t.Fatalf("ana's request carries %q", b)
		}
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "Hanoi") && m.Role != schema.Assistant {
				t.Fatalf("ana's request mentions kamal's memory: %q", m.Content)
			}
		}
	}
	if m, _ := result(reqs[6].Messages, "call-search")["matches"].([]any); len(m) != 0 {
		t.Fatalf("ana's search: %v", m)
	}
	if msg, _ := result(reqs[7].Messages, "call-read")["error"].(string); !strings.Contains(msg, "no memory file") || strings.Contains(msg, "Hanoi") {
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
