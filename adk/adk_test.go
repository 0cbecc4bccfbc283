package adk_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
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
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

const app = "adk-test"

type rig struct {
	model    *adktest.Model
	runner   *runner.Runner
	sessions session.Service
	store    *store.Store
}

func newRig(t *testing.T, scripts map[string][]adktest.Step, toolsets ...tool.Toolset) *rig {
	t.Helper()
	r := &rig{model: adktest.NewModel(scripts), sessions: session.InMemoryService()}
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: r.model, Instruction: "You are a travel assistant.", Toolsets: toolsets,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{AppName: app, Agent: a, SessionService: r.sessions, AutoCreateSession: true}
	for _, ts := range toolsets {
		if ts, ok := ts.(*agentmemadk.Toolset); ok {
			cfg.PluginConfig.Plugins = append(cfg.PluginConfig.Plugins, ts.Plugin())
		}
	}
	if r.runner, err = runner.New(cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) run(t *testing.T, user, sessionID, prompt string) []*session.Event {
	t.Helper()
	var evs []*session.Event
	for ev, err := range r.runner.Run(t.Context(), user, sessionID, genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("run %q: %v", prompt, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func newMemory(t *testing.T, opts *memory.Options) (*memory.Memory, *store.Store) {
	t.Helper()
	s := store.New(newMemDriver(t), nil)
	m, err := memory.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

func TestToolsetEndToEnd(t *testing.T) {
	mem, s := newMemory(t, nil)
	scripts := map[string][]adktest.Step{
		"I moved to Hanoi.": {
			adktest.Call("w1", "write_memory", map[string]any{"content": "- lives in Hanoi", "file": nil, "old_text": nil}),
			adktest.Call("bad", "write_memory", map[string]any{"content": "x", "file": "nope", "old_text": "missing"}),
			adktest.Text("Noted."),
		},
		"Where do I live?": {
			adktest.Call("r1", "read_memory", map[string]any{"file": "MEMORY.md"}),
			adktest.Text("Hanoi."),
		},
	}
	r := newRig(t, scripts, agentmemadk.NewToolset(mem, nil))
	r.run(t, "kamal", "s1", "I moved to Hanoi.")
	r.run(t, "kamal", "s2", "Where do I live?")
	r.run(t, "ana", "s3", "Where do I live?")

	reqs := r.model.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model requests", len(reqs))
	}
	guidance := mem.Instructions()
	for i, req := range reqs {
		if got := adktest.ToolNames(req.LLMRequest); strings.Join(got, ",") != "write_memory,read_memory,delete_memory,search_memory" {
			t.Fatalf("request %d tools %v", i, got)
		}
		sys := adktest.SystemText(req.LLMRequest)
		if !strings.Contains(sys, "travel assistant") || strings.Count(sys, guidance) != 1 {
			t.Fatalf("request %d system instruction %q", i, sys)
		}
		if strings.Contains(sys, "Hanoi") {
			t.Fatal("stored memory in the system instruction")
		}
		blocks := adktest.MemoryBlocks(req.LLMRequest)
		switch {
		case i == 0 || req.UserID == "ana":
			if len(blocks) != 0 {
				t.Fatalf("request %d (%s) has blocks %q", i, req.UserID, blocks)
			}
		default:
			if len(blocks) != 1 || !strings.Contains(blocks[0], "- lives in Hanoi") {
				t.Fatalf("request %d blocks %q", i, blocks)
			}
			// The block sits with the latest user prompt, not with the
			// function responses that follow it.
			for _, c := range req.Contents {
				for _, p := range c.Parts {
					if p.Text == blocks[0] && (c.Role != genai.RoleUser || !containsText(c, "I moved to Hanoi.", "Where do I live?")) {
						t.Fatalf("request %d: block not beside the prompt: %+v", i, c)
					}
				}
			}
		}
	}
	// The model saw the fact in the second run's first request, before any
	// tool call.
	if reqs[3].UserID != "kamal" || len(adktest.MemoryBlocks(reqs[3].LLMRequest)) != 1 {
		t.Fatalf("run 2 request: %+v", reqs[3])
	}
	// Tool results: a write, a fixable mistake (the run went on), a read.
	if res := adktest.FunctionResponse(reqs[1].LLMRequest, "w1"); res["status"] != "created" || res["replayed"] != false {
		t.Fatalf("write result %v", res)
	}
	if res := adktest.FunctionResponse(reqs[2].LLMRequest, "bad"); !strings.Contains(res["error"].(string), "no memory file") {
		t.Fatalf("tool error %v", res)
	}
	if res := adktest.FunctionResponse(reqs[4].LLMRequest, "r1"); res["result"] != "- lives in Hanoi\n" {
		t.Fatalf("read result %v", res)
	}
	if res := adktest.FunctionResponse(reqs[6].LLMRequest, "r1"); !strings.Contains(res["error"].(string), "no memory file") {
		t.Fatalf("ana read %v", res)
	}
	if f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 100); err != nil || f.Content != "- lives in Hanoi\n" {
		t.Fatalf("store %v %v", f, err)
	}
	// Nothing injected persisted in the session history.
	for _, sid := range []struct{ user, id string }{{"kamal", "s1"}, {"kamal", "s2"}, {"ana", "s3"}} {
		got, err := r.sessions.Get(t.Context(), &session.GetRequest{AppName: app, UserID: sid.user, SessionID: sid.id})
		if err != nil {
			t.Fatal(err)
		}
		for ev := range got.Session.Events().All() {
			if ev.Content != nil && (containsText(ev.Content, memory.BlockOpen) || containsText(ev.Content, guidance)) {
				t.Fatalf("session %s persisted injected text: %+v", sid.id, ev.Content)
			}
		}
	}
}

func containsText(c *genai.Content, subs ...string) bool {
	for _, p := range c.Parts {
		for _, s := range subs {
			if p != nil && strings.Contains(p.Text, s) {
				return true
			}
		}
	}
	return false
}

func TestReplayedCallAndRedactedErrors(t *testing.T) {
	mem, s := newMemory(t, nil)
	var mu sync.Mutex
	var reported []error
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{OnError: func(_ context.Context, err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	args := map[string]any{"content": "- hates early flights", "file": nil, "old_text": nil}
	r := newRig(t, map[string][]adktest.Step{"Remember.": {
		adktest.Call("c1", "write_memory", args),
		adktest.Call("c1", "write_memory", args), // replayed: same invocation, call id, args
		adktest.Call("c1", "write_memory", map[string]any{"content": "- loves early flights", "file": nil, "old_text": nil}),
		adktest.Text("Done."),
	}}, ts)
	r.run(t, "kamal", "s1", "Remember.")
	reqs := r.model.Requests()
	first := adktest.FunctionResponse(reqs[1].LLMRequest, "c1")
	second := adktest.FunctionResponse(reqs[2].LLMRequest, "c1")
	if first["replayed"] != false || second["replayed"] != true || first["version"] != second["version"] {
		t.Fatalf("replay: %v then %v", first, second)
	}
	third := adktest.FunctionResponse(reqs[3].LLMRequest, "c1")
	msg, _ := third["error"].(string)
	if !strings.Contains(msg, "different arguments") || strings.Contains(msg, "kamal") || strings.Contains(msg, "MEMORY.md") {
		t.Fatalf("conflict shown to the model as %q", msg)
	}
	if len(reported) != 1 || !errors.Is(reported[0], store.ErrOperationConflict) {
		t.Fatalf("OnError got %v", reported)
	}
	if f, _ := s.Read(t.Context(), "kamal/main/MEMORY.md", 100); f.Content != "- hates early flights\n" {
		t.Fatalf("content %q", f.Content)
	}
}

func TestTwoMemoriesOnOneAgent(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	personal, _ := memory.New(s, &memory.Options{Heading: "Your notes"})
	org, _ := memory.New(s, &memory.Options{AgentName: "org", Namespace: "acme", Heading: "Org notes", ToolPrefix: "org"})
	r := newRig(t, map[string][]adktest.Step{"Hi.": {
		adktest.Call("p", "write_memory", map[string]any{"content": "- personal fact", "file": nil, "old_text": nil}),
		adktest.Call("o", "org_write_memory", map[string]any{"content": "- org fact", "file": nil, "old_text": nil}),
		adktest.Text("ok"),
	}}, agentmemadk.NewToolset(personal, nil), agentmemadk.NewToolset(org, nil))
	r.run(t, "kamal", "s1", "Hi.")
	reqs := r.model.Requests()
	last := reqs[len(reqs)-1].LLMRequest
	if n := len(adktest.ToolNames(last)); n != 8 {
		t.Fatalf("%d tools", n)
	}
	blocks := adktest.MemoryBlocks(last)
	if len(blocks) != 2 || !slices.ContainsFunc(blocks, func(b string) bool { return strings.Contains(b, "## Your notes") && strings.Contains(b, "personal") }) ||
		!slices.ContainsFunc(blocks, func(b string) bool { return strings.Contains(b, "## Org notes") && strings.Contains(b, "org fact") }) {
		t.Fatalf("blocks %q", blocks)
	}
	if _, err := s.Read(t.Context(), "acme/org/MEMORY.md", 100); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotErrors(t *testing.T) {
	boom := errors.New("no tenant")
	mem, _ := newMemory(t, &memory.Options{NamespaceFunc: func(ctx context.Context) (string, error) { return "", boom }})
	r := newRig(t, map[string][]adktest.Step{"Hi.": {adktest.Text("ok")}}, agentmemadk.NewToolset(mem, nil))
	var got error
	for _, err := range r.runner.Run(t.Context(), "kamal", "s1", genai.NewContentFromText("Hi.", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			got = err
		}
	}
	if !errors.Is(got, boom) || len(r.model.Requests()) != 0 {
		t.Fatalf("resolver failure: %v, %d requests", got, len(r.model.Requests()))
	}
}

// A toolset made from a nil notebook does not panic: building the agent
// or running it fails with ErrNilMemory, and nothing reaches the model.
func TestNilMemory(t *testing.T) {
	ts := agentmemadk.NewToolset(nil, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 4}}})
	if ts.Name() != "memory" || ts.Plugin() == nil {
		t.Fatalf("name %q, plugin %v", ts.Name(), ts.Plugin())
	}
	if _, err := ts.Tools(nil); !errors.Is(err, agentmemadk.ErrNilMemory) {
		t.Fatalf("Tools: %v, want ErrNilMemory", err)
	}
	if err := ts.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r := newRig(t, map[string][]adktest.Step{"Hi.": {adktest.Text("ok")}}, ts)
	var got error
	for _, err := range r.runner.Run(t.Context(), "kamal", "s1", genai.NewContentFromText("Hi.", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			got = err
		}
	}
	if !errors.Is(got, agentmemadk.ErrNilMemory) || len(r.model.Requests()) != 0 {
		t.Fatalf("run: %v, %d model requests; want ErrNilMemory and none", got, len(r.model.Requests()))
	}
}

// The namespace resolver sees the ADK context, so it can use session state
// or the app name.
func TestNamespaceFromADKContext(t *testing.T) {
	mem, s := newMemory(t, &memory.Options{NamespaceFunc: func(ctx context.Context) (string, error) {
		rc, ok := ctx.(agent.ReadonlyContext)
		if !ok {
			return "", errors.New("not an ADK context")
		}
		return rc.AppName() + "/" + rc.UserID(), nil
	}})
	r := newRig(t, map[string][]adktest.Step{"Hi.": {
		adktest.Call("w", "write_memory", map[string]any{"content": "- x", "file": nil, "old_text": nil}),
		adktest.Text("ok"),
	}}, agentmemadk.NewToolset(mem, nil))
	r.run(t, "kamal", "s1", "Hi.")
	if _, err := s.Read(t.Context(), app+"/kamal/main/MEMORY.md", 10); err != nil {
		t.Fatal(err)
	}
	if b := adktest.MemoryBlocks(r.model.Requests()[1].LLMRequest); len(b) != 1 {
		t.Fatalf("blocks %q", b)
	}
}

// Any ADK user id works as a namespace: it is escaped, never refused, and
// an id with a "/" cannot reach another user's notebook.
func TestUserIDsAreEscaped(t *testing.T) {
	mem, s := newMemory(t, nil)
	script := func(fact string) []adktest.Step {
		return []adktest.Step{
			adktest.Call("w", "write_memory", map[string]any{"content": fact, "file": nil, "old_text": nil}),
			adktest.Text("ok"),
		}
	}
	r := newRig(t, map[string][]adktest.Step{"Hi.": script("- email user"), "Hello.": script("- slash user")}, agentmemadk.NewToolset(mem, nil))
	r.run(t, "kamal@example.com", "s1", "Hi.")
	r.run(t, "kamal@example.com/../ana", "s2", "Hello.")
	if f, err := s.Read(t.Context(), "kamal_40example.com/main/MEMORY.md", 100); err != nil || f.Content != "- email user\n" {
		t.Fatalf("email user's notebook: %+v, %v", f, err)
	}
	if f, err := s.Read(t.Context(), "kamal_40example.com_2f._2e_2fana/main/MEMORY.md", 100); err != nil || f.Content != "- slash user\n" {
		t.Fatalf("slash user's notebook: %+v, %v", f, err)
	}
	if paths, _ := s.ListPaths(t.Context(), "", 10); len(paths) != 2 {
		t.Fatalf("paths %v", paths)
	}
	if b := adktest.MemoryBlocks(r.model.Requests()[1].LLMRequest); len(b) != 1 || !strings.Contains(b[0], "email user") {
		t.Fatalf("blocks %q", b)
	}
}

var _ model.LLM = (*adktest.Model)(nil)
