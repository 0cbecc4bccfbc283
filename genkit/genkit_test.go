package genkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
	agentmemgenkit "github.com/agentmem/agentmem/genkit"
	"github.com/agentmem/agentmem/genkit/genkittest"
)

const system = "You are a travel assistant."

type rig struct {
	g     *genkit.Genkit
	model *genkittest.Model
	nb    *agentmemgenkit.Notebook
	store *store.Store
	mem   *memory.Memory
}

func newRig(t *testing.T, memOpts *memory.Options, opts *agentmemgenkit.Options, scripts map[string][]genkittest.Step) *rig {
	t.Helper()
	r := &rig{g: genkit.Init(t.Context()), store: store.New(newMemDriver(t), nil)}
	var err error
	if r.mem, err = memory.New(r.store, memOpts); err != nil {
		t.Fatal(err)
	}
	if r.nb, err = agentmemgenkit.Define(r.g, r.mem, opts); err != nil {
		t.Fatal(err)
	}
	r.model = genkittest.Define(r.g, "test/scripted", scripts)
	return r
}

func (r *rig) generate(ctx context.Context, msgs ...*ai.Message) (*ai.ModelResponse, error) {
	return genkit.Generate(ctx, r.g, ai.WithModel(r.model), ai.WithSystem(system), ai.WithMessages(msgs...),
		ai.WithTools(r.nb.Tools()...), ai.WithUse(r.nb))
}

var writeArgs = map[string]any{"content": "- hates early flights", "file": nil, "old_text": nil}

func TestNotebookEndToEnd(t *testing.T) {
	r := newRig(t, nil, nil, map[string][]genkittest.Step{
		"Remember.": {
			genkittest.Call("c1", memory.WriteTool, writeArgs),
			genkittest.Call("c1", memory.WriteTool, writeArgs), // replayed: same run, ref, args
			genkittest.Call("c2", memory.WriteTool, map[string]any{"content": 7, "file": nil, "old_text": nil}),
			genkittest.Answer("Done."),
		},
		"Book a flight.": {genkittest.Answer("Booked.")},
	})
	kamal := memory.WithUserID(t.Context(), "kamal")
	resp, err := r.generate(memory.WithRunID(kamal, "run-1"), ai.NewUserTextMessage("Remember."))
	if err != nil {
		t.Fatal(err)
	}
	reqs := r.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	first := genkittest.ToolResponse(reqs[1].Messages, "c1")
	second := genkittest.ToolResponse(reqs[2].Messages[len(reqs[2].Messages)-1:], "c1")
	if first["status"] != "created" || first["replayed"] != false || second["replayed"] != true || first["version"] != second["version"] {
		t.Fatalf("write results %v then %v", first, second)
	}
	if msg, _ := genkittest.ToolResponse(reqs[3].Messages, "c2")["error"].(string); msg == "" {
		t.Fatalf("a fixable mistake came back as %v", genkittest.ToolResponse(reqs[3].Messages, "c2"))
	}
	if f, err := r.store.Read(t.Context(), "kamal/main/MEMORY.md", 100); err != nil || f.Content != "- hates early flights\n" {
		t.Fatalf("notebook %+v, %v", f, err)
	}
	args, _ := json.Marshal(writeArgs)
	res, err := r.mem.Call(t.Context(), memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "c1"}, memory.WriteTool, args)
	if w, ok := res.(*memory.WriteResult); err != nil || !ok || !w.Replayed {
		t.Fatalf("replay: %#v, %v", res, err)
	}
	for i, req := range reqs {
		if b := genkittest.MemoryBlocks(req.Messages); len(b) != min(i, 1) {
			t.Fatalf("request %d blocks %q", i, b)
		}
		if sys := genkittest.Text(req.Messages[0]); req.Messages[0].Role != ai.RoleSystem || strings.Count(sys, r.mem.Instructions()) != 1 || !strings.HasPrefix(sys, system) {
			t.Fatalf("request %d system message %q", i, sys)
		}
		if got := strings.Join(slices.Sorted(slices.Values(genkittest.ToolNames(req))), ","); got != "delete_memory,read_memory,search_memory,write_memory" {
			t.Fatalf("tools %s", got)
		}
	}
	// The tools carry the notebook's JSON Schemas.
	for _, spec := range r.mem.Tools() {
		i := slices.Index(genkittest.ToolNames(reqs[0]), spec.Name)
		if i < 0 {
			t.Fatalf("no tool %s", spec.Name)
		}
		got, _ := json.Marshal(reqs[0].Tools[i].InputSchema)
		want, _ := json.Marshal(spec.InputSchema)
		if reqs[0].Tools[i].Description != spec.Description || string(got) != string(want) {
			t.Fatalf("%s: schema %s, want %s", spec.Name, got, want)
		}
	}
	// Nothing injected is in the history the caller gets back.
	for _, m := range resp.History() {
		if b := genkittest.MemoryBlocks([]*ai.Message{m}); len(b) != 0 || strings.Contains(genkittest.Text(m), r.mem.Instructions()) {
			t.Fatalf("history carries injected text: %q", genkittest.Text(m))
		}
	}

	// A new conversation: the first request carries the fact beside the prompt.
	if _, err := r.generate(kamal, ai.NewUserTextMessage("Book a flight.")); err != nil {
		t.Fatal(err)
	}
	req := r.model.Requests()[4]
	last := req.Messages[len(req.Messages)-1]
	b := genkittest.MemoryBlocks(req.Messages)
	if len(b) != 1 || !strings.Contains(b[0], "hates early flights") || last.Role != ai.RoleUser ||
		len(last.Content) != 2 || last.Content[0].Text != "Book a flight." || last.Content[1].Text != b[0] {
		t.Fatalf("run 2 prompt %q", genkittest.Text(last))
	}

	// Another user sees nothing.
	if _, err := r.generate(memory.WithUserID(t.Context(), "ana"), ai.NewUserTextMessage("Book a flight.")); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.model.Requests()[5].Messages {
		if strings.Contains(genkittest.Text(m), "early flights") || len(genkittest.MemoryBlocks([]*ai.Message{m})) != 0 {
			t.Fatalf("ana's request carries %q", genkittest.Text(m))
		}
	}
}

// Options.UserID reads the user from the context; ids are escaped.
func TestUserIDFunc(t *testing.T) {
	type key struct{}
	r := newRig(t, nil, &agentmemgenkit.Options{UserID: func(ctx context.Context) (string, error) {
		id, _ := ctx.Value(key{}).(string)
		return id, nil
	}}, map[string][]genkittest.Step{"Remember.": {genkittest.Call("c1", memory.WriteTool, writeArgs), genkittest.Answer("ok")}})
	if _, err := r.generate(context.WithValue(t.Context(), key{}, "kamal@example.com/../ana"), ai.NewUserTextMessage("Remember.")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Read(t.Context(), "kamal_40example.com_2f._2e_2fana/main/MEMORY.md", 100); err != nil {
		t.Fatal(err)
	}
	if paths, _ := r.store.ListPaths(t.Context(), "", 10); len(paths) != 1 {
		t.Fatalf("paths %v", paths)
	}
}

// Without a user the generation fails before the model is called, and a
// snapshot failure fails it in the notebook's raise mode.
func TestInjectionErrors(t *testing.T) {
	scripts := map[string][]genkittest.Step{"Hi.": {genkittest.Answer("ok")}}
	r := newRig(t, nil, nil, scripts)
	if _, err := r.generate(t.Context(), ai.NewUserTextMessage("Hi.")); !errors.Is(err, memory.ErrNoUser) || len(r.model.Requests()) != 0 {
		t.Fatalf("no user: %v, %d requests", err, len(r.model.Requests()))
	}
	boom := errors.New("no tenant")
	r = newRig(t, &memory.Options{InjectionErrors: memory.RaiseErrors, NamespaceFunc: func(context.Context) (string, error) { return "", boom }}, nil, scripts)
	if _, err := r.generate(memory.WithUserID(t.Context(), "kamal"), ai.NewUserTextMessage("Hi.")); !errors.Is(err, boom) || len(r.model.Requests()) != 0 {
		t.Fatalf("snapshot failure: %v, %d requests", err, len(r.model.Requests()))
	}
}

// Each Generate call gets its own run id: the same ref in two calls is two
// tool calls.
func TestRunIDPerGenerate(t *testing.T) {
	step := func(fact string) []genkittest.Step {
		return []genkittest.Step{genkittest.Call("c1", memory.WriteTool, map[string]any{"content": fact, "file": nil, "old_text": nil}), genkittest.Answer("ok")}
	}
	r := newRig(t, nil, nil, map[string][]genkittest.Step{"One.": step("- one"), "Two.": step("- two")})
	kamal := memory.WithUserID(t.Context(), "kamal")
	for _, p := range []string{"One.", "Two."} {
		if _, err := r.generate(kamal, ai.NewUserTextMessage(p)); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := r.store.Read(t.Context(), "kamal/main/MEMORY.md", 100); err != nil || f.Content != "- one\n- two\n" {
		t.Fatalf("notebook %+v, %v", f, err)
	}
	if _, err := agentmemgenkit.Define(nil, r.mem, nil); !errors.Is(err, agentmemgenkit.ErrNilArgument) {
		t.Fatalf("nil Genkit: %v, want ErrNilArgument", err)
	}
	if _, err := agentmemgenkit.Define(r.g, nil, nil); !errors.Is(err, agentmemgenkit.ErrNilArgument) {
		t.Fatalf("nil memory: %v, want ErrNilArgument", err)
	}
	if _, err := agentmemgenkit.Model(nil, nil).Generate(t.Context(), pruned.ModelRequest{}); !errors.Is(err, store.ErrNilArgument) {
		t.Fatalf("Model(nil, nil): %v, want store.ErrNilArgument", err)
	}
}
