package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemeino "github.com/agentmem/agentmem/eino"
	"github.com/agentmem/agentmem/eino/einotest"
)

const instruction = "You are a travel assistant."

func newMemory(t *testing.T, opts *memory.Options) (*memory.Memory, *store.Store) {
	t.Helper()
	s := store.New(newMemDriver(t), nil)
	m, err := memory.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

func newRunner(t *testing.T, llm *einotest.Model, mem *memory.Memory, opts *agentmemeino.Options) *adk.Runner {
	t.Helper()
	mw, err := agentmemeino.NewMiddleware(mem, opts)
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
	return adk.NewRunner(t.Context(), adk.RunnerConfig{Agent: a})
}

// run runs one conversation turn and returns its error, if any.
func run(ctx context.Context, r *adk.Runner, msgs []*schema.Message, opts ...adk.AgentRunOption) error {
	iter := r.Run(ctx, msgs, opts...)
	var err error
	for {
		ev, ok := iter.Next()
		if !ok {
			return err
		}
		if ev.Err != nil && err == nil {
			err = ev.Err
		}
	}
}

func mustRun(t *testing.T, ctx context.Context, r *adk.Runner, msgs ...*schema.Message) {
	t.Helper()
	if err := run(ctx, r, msgs); err != nil {
		t.Fatal(err)
	}
}

var writeArgs = map[string]any{"content": "- hates early flights", "file": nil, "old_text": nil}

func TestMiddlewareEndToEnd(t *testing.T) {
	mem, s := newMemory(t, nil)
	llm := einotest.NewModel(map[string][]einotest.Step{
		"Remember.": {
			einotest.Call("c1", memory.WriteTool, writeArgs),
			einotest.Call("c1", memory.WriteTool, writeArgs), // replayed: same run, call id, args
			einotest.Call("c2", memory.WriteTool, map[string]any{"content": 7, "file": nil, "old_text": nil}),
			einotest.Text("Done."),
		},
		"Book a flight.": {einotest.Text("Booked.")},
	})
	r := newRunner(t, llm, mem, nil)
	kamal := memory.WithUserID(t.Context(), "kamal")
	mustRun(t, memory.WithRunID(kamal, "run-1"), r, schema.UserMessage("Remember."))

	reqs := llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var first, second map[string]any
	_ = json.Unmarshal([]byte(einotest.ToolResult(reqs[1].Messages, "c1")), &first)
	_ = json.Unmarshal([]byte(einotest.ToolResult(reqs[2].Messages[len(reqs[2].Messages)-1:], "c1")), &second)
	if first["status"] != "created" || first["replayed"] != false || second["replayed"] != true || first["version"] != second["version"] {
		t.Fatalf("write results %v then %v", first, second)
	}
	if msg := einotest.ToolResult(reqs[3].Messages, "c2"); !strings.Contains(msg, `"error"`) {
		t.Fatalf("a fixable mistake came back as %q", msg)
	}
	if f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 100); err != nil || f.Content != "- hates early flights\n" {
		t.Fatalf("notebook %+v, %v", f, err)
	}
	// A durable replay of the call with the run's id writes nothing.
	args, _ := json.Marshal(writeArgs)
	res, err := mem.Call(t.Context(), memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "c1"}, memory.WriteTool, args)
	if w, ok := res.(*memory.WriteResult); err != nil || !ok || !w.Replayed {
		t.Fatalf("replay: %#v, %v", res, err)
	}
	// The first request has an empty notebook, so no block; every later
	// request of the tool loop carries exactly one: nothing injected
	// persisted in the run's history.
	for i, req := range reqs {
		if b := einotest.MemoryBlocks(req.Messages); len(b) != min(i, 1) {
			t.Fatalf("request %d blocks %q", i, b)
		}
		if n := strings.Count(req.Messages[0].Content, mem.Instructions()); req.Messages[0].Role != schema.System || n != 1 ||
			!strings.HasPrefix(req.Messages[0].Content, instruction) {
			t.Fatalf("request %d system message %q", i, req.Messages[0].Content)
		}
		if got := strings.Join(einotest.ToolNames(req.Tools), ","); got != "write_memory,read_memory,delete_memory,search_memory" {
			t.Fatalf("tools %s", got)
		}
	}

	// A new conversation: the first request carries the fact beside the
	// prompt; the caller's messages are unchanged.
	prompt := schema.UserMessage("Book a flight.")
	mustRun(t, kamal, r, prompt)
	req := llm.Requests()[4]
	last := req.Messages[len(req.Messages)-1]
	b := einotest.MemoryBlocks(req.Messages)
	if len(b) != 1 || !strings.Contains(b[0], "hates early flights") || last.Role != schema.User ||
		!strings.HasPrefix(last.Content, "Book a flight.\n\n"+memory.BlockOpen) {
		t.Fatalf("run 2 prompt %q", last.Content)
	}
	if prompt.Content != "Book a flight." {
		t.Fatalf("caller's message changed to %q", prompt.Content)
	}

	// Another user sees nothing.
	mustRun(t, memory.WithUserID(t.Context(), "ana"), r, schema.UserMessage("Book a flight."))
	for _, m := range llm.Requests()[5].Messages {
		if strings.Contains(m.Content, "early flights") || strings.Contains(m.Content, memory.BlockOpen) {
			t.Fatalf("ana's request carries %q", m.Content)
		}
	}
}

// The user id can come from a session value, and is escaped.
func TestUserFromSessionValues(t *testing.T) {
	mem, s := newMemory(t, nil)
	llm := einotest.NewModel(map[string][]einotest.Step{"Remember.": {einotest.Call("c1", memory.WriteTool, writeArgs), einotest.Text("ok")}})
	r := newRunner(t, llm, mem, &agentmemeino.Options{UserIDKey: "uid"})
	// The instruction is formatted with the session values: no braces in it.
	if err := run(t.Context(), r, []*schema.Message{schema.UserMessage("Remember.")},
		adk.WithSessionValues(map[string]any{"uid": "kamal@example.com/../ana"})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(t.Context(), "kamal_40example.com_2f._2e_2fana/main/MEMORY.md", 100); err != nil {
		t.Fatal(err)
	}
	if paths, _ := s.ListPaths(t.Context(), "", 10); len(paths) != 1 {
		t.Fatalf("paths %v", paths)
	}
}

// Without a user the run fails before the model is called, and a snapshot
// failure fails it in the notebook's raise mode.
func TestInjectionErrors(t *testing.T) {
	mem, _ := newMemory(t, nil)
	llm := einotest.NewModel(map[string][]einotest.Step{"Hi.": {einotest.Text("ok")}})
	r := newRunner(t, llm, mem, nil)
	if err := run(t.Context(), r, []*schema.Message{schema.UserMessage("Hi.")}); !errors.Is(err, memory.ErrNoUser) || len(llm.Requests()) != 0 {
		t.Fatalf("no user: %v, %d requests", err, len(llm.Requests()))
	}

	boom := errors.New("no tenant")
	mem, _ = newMemory(t, &memory.Options{InjectionErrors: memory.RaiseErrors, NamespaceFunc: func(context.Context) (string, error) { return "", boom }})
	r = newRunner(t, llm, mem, nil)
	if err := run(memory.WithUserID(t.Context(), "kamal"), r, []*schema.Message{schema.UserMessage("Hi.")}); !errors.Is(err, boom) || len(llm.Requests()) != 0 {
		t.Fatalf("snapshot failure: %v, %d requests", err, len(llm.Requests()))
	}
}

// Each agent run gets its own run id: the same tool-call id in two runs is
// two calls.
func TestRunIDPerRun(t *testing.T) {
	mem, s := newMemory(t, nil)
	step := func(fact string) []einotest.Step {
		return []einotest.Step{einotest.Call("c1", memory.WriteTool, map[string]any{"content": fact, "file": nil, "old_text": nil}), einotest.Text("ok")}
	}
	llm := einotest.NewModel(map[string][]einotest.Step{"One.": step("- one"), "Two.": step("- two")})
	r := newRunner(t, llm, mem, nil)
	kamal := memory.WithUserID(t.Context(), "kamal")
	mustRun(t, kamal, r, schema.UserMessage("One."))
	mustRun(t, kamal, r, schema.UserMessage("Two."))
	if f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 100); err != nil || f.Content != "- one\n- two\n" {
		t.Fatalf("notebook %+v, %v", f, err)
	}
}

// The tools carry the notebook's JSON Schemas unchanged.
func TestToolSchemas(t *testing.T) {
	mem, _ := newMemory(t, nil)
	mw, err := agentmemeino.NewMiddleware(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	specs := mem.Tools()
	for i, tl := range mw.Tools() {
		info, err := tl.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		js, err := info.ParamsOneOf.ToJSONSchema()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(js)
		want, _ := json.Marshal(specs[i].InputSchema)
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal(want, &w)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if info.Name != specs[i].Name || info.Desc != specs[i].Description || string(gb) != string(wb) {
			t.Fatalf("%s: schema %s, want %s", info.Name, gb, wb)
		}
	}
	if _, err := agentmemeino.NewMiddleware(nil, nil); !errors.Is(err, agentmemeino.ErrNilMemory) {
		t.Fatalf("nil memory: %v, want ErrNilMemory", err)
	}
}
