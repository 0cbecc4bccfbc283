package eino_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	agentmemeino "github.com/agentmem/agentmem/eino"
	"github.com/agentmem/agentmem/eino/einotest"
)

// converse runs one turn on the history and returns the history with the
// prompt and every message the agent produced (ids included), as an
// application keeps it.
func converse(t *testing.T, ctx context.Context, r *adk.Runner, history []*schema.Message, prompt string) []*schema.Message {
	t.Helper()
	in := append(history, schema.UserMessage(prompt))
	iter := r.Run(ctx, in)
	for {
		ev, ok := iter.Next()
		if !ok {
			return in
		}
		if ev.Err != nil {
			t.Fatalf("%q: %v", prompt, ev.Err)
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, msg)
		}
	}
}

func conversation(n int) ([]string, map[string][]einotest.Step) {
	scripts := map[string][]einotest.Step{}
	var prompts []string
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("prompt %d", i)
		prompts = append(prompts, p)
		scripts[p] = []einotest.Step{einotest.Text(fmt.Sprintf("answer %d", i))}
	}
	return prompts, scripts
}

func newWindowRunner(t *testing.T, llm *einotest.Model, mem *memory.Memory, w agentmemeino.HistoryWindow) (*adk.Runner, *agentmemeino.Middleware) {
	t.Helper()
	mw, err := agentmemeino.NewMiddleware(mem, &agentmemeino.Options{HistoryWindow: w})
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(t.Context(), &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "books travel", Instruction: instruction, Model: llm,
		Handlers: []adk.ChatModelAgentMiddleware{mw},
	})
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(t.Context(), adk.RunnerConfig{Agent: a}), mw
}

func TestHistoryWindow(t *testing.T) {
	mem, s := newMemory(t, nil)
	prompts, scripts := conversation(20) // 40 messages
	llm := einotest.NewModel(scripts)
	r, mw := newWindowRunner(t, llm, mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 20}})
	ctx := memory.WithUserID(t.Context(), "kamal")
	var history []*schema.Message
	for _, p := range prompts {
		history = converse(t, ctx, r, history, p)
	}
	if err := mw.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(history) != 40 {
		t.Fatalf("history has %d messages", len(history))
	}
	for i, req := range llm.Requests() {
		body := req.Messages[1:] // the system message aside
		if req.Messages[0].Role != schema.System || len(body) > 20 || body[0].Role != schema.User {
			t.Fatalf("request %d: %d messages, starting with %+v", i, len(body), body[0])
		}
	}
	last := llm.Requests()[19].Messages
	if len(last) != 20 || einotest.Prompt(last[1]) != "prompt 11" {
		t.Fatalf("last request: %d messages from %q", len(last), einotest.Prompt(last[1]))
	}
	var want []string
	for i := 1; i <= 10; i++ {
		want = append(want, fmt.Sprintf("- user: prompt %d", i), fmt.Sprintf("- assistant: answer %d", i))
	}
	wantFile := strings.Join(want, "\n") + "\n"
	if f, err := s.Read(t.Context(), "kamal/main/pruned.md", 1<<16); err != nil || f.Content != wantFile {
		t.Fatalf("pruned.md: %v\n%s", err, f.Content)
	}

	// A replay of the last turn by a new process (a new middleware) on the
	// same history appends nothing.
	r2, mw2 := newWindowRunner(t, einotest.NewModel(scripts), mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 20}})
	converse(t, ctx, r2, history[:38], prompts[19])
	if err := mw2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(t.Context(), "kamal/main/pruned.md", 1<<16); err != nil || f.Content != wantFile {
		t.Fatalf("pruned.md after the replay: %v\n%s", err, f.Content)
	}
}

// TestHistoryWindowKeepsToolPairs: a tool loop longer than the window is
// cut at a call, never before a lone tool result.
func TestHistoryWindowKeepsToolPairs(t *testing.T) {
	mem, s := newMemory(t, nil)
	scripts := map[string][]einotest.Step{"Save three facts.": {
		einotest.Call("w1", memory.WriteTool, map[string]any{"content": "- one", "file": nil, "old_text": nil}),
		einotest.Call("w2", memory.WriteTool, map[string]any{"content": "- two", "file": nil, "old_text": nil}),
		einotest.Call("w3", memory.WriteTool, map[string]any{"content": "- three", "file": nil, "old_text": nil}),
		einotest.Text("Saved."),
	}}
	llm := einotest.NewModel(scripts)
	r, mw := newWindowRunner(t, llm, mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 5}})
	converse(t, memory.WithUserID(t.Context(), "kamal"), r, nil, "Save three facts.")
	if err := mw.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, req := range llm.Requests() {
		calls := map[string]bool{}
		for _, msg := range req.Messages[1:] {
			for _, c := range msg.ToolCalls {
				calls[c.ID] = true
			}
			if msg.Role == schema.Tool && !calls[msg.ToolCallID] {
				t.Fatalf("request %d: tool result %s without its call", i, msg.ToolCallID)
			}
		}
		if len(req.Messages)-1 > 5 {
			t.Fatalf("request %d carries %d messages", i, len(req.Messages)-1)
		}
	}
	f, err := s.Read(t.Context(), "kamal/main/pruned.md", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(f.Content, "- user: Save three facts.") != 1 || strings.Count(f.Content, "called `write_memory`") != 1 ||
		!strings.Contains(f.Content, "- tool `write_memory`: returned ") {
		t.Fatalf("pruned.md:\n%s", f.Content)
	}
}

func TestHistoryWindowClosed(t *testing.T) {
	mem, _ := newMemory(t, nil)
	prompts, scripts := conversation(2)
	r, mw := newWindowRunner(t, einotest.NewModel(scripts), mem, agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 1}})
	ctx := memory.WithUserID(t.Context(), "kamal")
	history := converse(t, ctx, r, nil, prompts[0])
	if err := mw.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, r, append(history, schema.UserMessage(prompts[1]))); !errors.Is(err, pruned.ErrQueueClosed) {
		t.Fatalf("after Close: %v", err)
	}
	plain, err := agentmemeino.NewMiddleware(mem, nil)
	if err != nil || plain.Flush(t.Context()) != nil || plain.Close(t.Context()) != nil {
		t.Fatal("Flush/Close without a window")
	}
}

// TestHistoryWindowRotates: with a 200-character file limit, 38 pruned
// messages go on past pruned.md into pruned_0002.md, …, each once and in
// order, and a replay by a new middleware changes nothing.
func TestHistoryWindowRotates(t *testing.T) {
	mem, s := newMemory(t, &memory.Options{Limits: memory.Limits{MaxMemorySize: 200}})
	prompts, scripts := conversation(20)
	w := agentmemeino.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 2}}
	r, mw := newWindowRunner(t, einotest.NewModel(scripts), mem, w)
	ctx := memory.WithUserID(t.Context(), "kamal")
	var history []*schema.Message
	for _, p := range prompts {
		history = converse(t, ctx, r, history, p)
	}
	if err := mw.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	series := func() string {
		t.Helper()
		files, err := pruned.SeriesPaths(t.Context(), s, "kamal/main/pruned.md")
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 4 {
			t.Fatalf("files %q", files)
		}
		var all strings.Builder
		for _, p := range files {
			f, err := s.Read(t.Context(), p, 1<<16)
			if err != nil || len(f.Content) > 200 {
				t.Fatalf("%s: %v, %d bytes", p, err, len(f.Content))
			}
			all.WriteString(f.Content)
		}
		return all.String()
	}
	var want []string
	for i := 1; i <= 19; i++ {
		want = append(want, fmt.Sprintf("- user: prompt %d", i), fmt.Sprintf("- assistant: answer %d", i))
	}
	got := series()
	if got != strings.Join(want, "\n")+"\n" {
		t.Fatalf("series:\n%s", got)
	}
	// A new process replays the last turn on the same history: every
	// pruned message is queued again, and answered from its receipt.
	r2, mw2 := newWindowRunner(t, einotest.NewModel(scripts), mem, w)
	converse(t, ctx, r2, history[:38], prompts[19])
	if err := mw2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if again := series(); again != got {
		t.Fatalf("after the replay:\n%s", again)
	}
}
