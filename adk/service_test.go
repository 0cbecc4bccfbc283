package adk_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	adkmemory "google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/loadmemorytool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// memoryRig runs an agent with ADK's load_memory tool over a MemoryService.
type memoryRig struct {
	model    *adktest.Model
	runner   *runner.Runner
	sessions session.Service
	service  *agentmemadk.MemoryService
	app      string
}

func newMemoryRig(t *testing.T, s *store.Store, appName string, scripts map[string][]adktest.Step) *memoryRig {
	t.Helper()
	svc, err := agentmemadk.NewMemoryService(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &memoryRig{model: adktest.NewModel(scripts), sessions: session.InMemoryService(), service: svc, app: appName}
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: r.model, Instruction: "You help.", Tools: []tool.Tool{loadmemorytool.New()},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.runner, err = runner.New(runner.Config{AppName: appName, Agent: a, SessionService: r.sessions, MemoryService: svc, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *memoryRig) run(t *testing.T, user, sessionID, prompt string) session.Session {
	t.Helper()
	for _, err := range r.runner.Run(adktest.Deterministic(t.Context(), sessionID, epoch), user, sessionID, genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			t.Fatalf("run %q: %v", prompt, err)
		}
	}
	got, err := r.sessions.Get(t.Context(), &session.GetRequest{AppName: r.app, UserID: user, SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return got.Session
}

func TestMemoryService(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	scripts := map[string][]adktest.Step{
		"I moved to Hanoi and hate early flights": {adktest.Text("Noted: Hanoi.")},
		"Where do I live?": {
			adktest.Call("load-1", "load_memory", map[string]any{"query": "hanoi"}),
			adktest.Text("In Hanoi."),
		},
	}
	r := newMemoryRig(t, s, "travel", scripts)
	sess := r.run(t, "kamal@example.com", "s1", "I moved to Hanoi and hate early flights")
	// ADK adds a session again and again: each event is stored once.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- r.service.AddSessionToMemory(t.Context(), sess) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.service.AddSessionToMemory(t.Context(), sess); err != nil {
		t.Fatal(err)
	}
	paths, err := s.ListPaths(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kamal_40example.com/adk-sessions/travel/s1__s1-2.md", // the user's message
		"kamal_40example.com/adk-sessions/travel/s1__s1-4.md", // the answer
	}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("stored %q, want %q", paths, want)
	}
	f, err := s.Read(t.Context(), want[0], 1000)
	if err != nil {
		t.Fatal(err)
	}
	if f.Content != "### user · 2026-11-30T09:00:02Z\n\nI moved to Hanoi and hate early flights\n" {
		t.Fatalf("event file %q", f.Content)
	}

	// load_memory in a new session finds it, with author and timestamp.
	r.run(t, "kamal@example.com", "s2", "Where do I live?")
	reqs := r.model.Requests()
	res := adktest.FunctionResponse(reqs[len(reqs)-1].LLMRequest, "load-1")
	mems, _ := res["memories"].([]any)
	if len(mems) != 2 {
		t.Fatalf("load_memory returned %v", res)
	}
	// Both events mention Hanoi; BM25 ranks the shorter answer first, so
	// find the user's message by its id.
	var first map[string]any
	for _, m := range mems {
		if mm, _ := m.(map[string]any); mm["ID"] == "s1-2" {
			first = mm
		}
	}
	if first["Author"] != "user" || first["ID"] != "s1-2" || !strings.HasPrefix(first["Timestamp"].(string), "2026-11-30T09:00:02") ||
		!strings.Contains(toJSON(t, first["Content"]), "I moved to Hanoi") {
		t.Fatalf("first memory %v", first)
	}

	// Scoped to the user and the app.
	for _, q := range []*adkmemory.SearchRequest{
		{AppName: "travel", UserID: "ana", Query: "hanoi"},
		{AppName: "other", UserID: "kamal@example.com", Query: "hanoi"},
	} {
		got, err := r.service.SearchMemory(t.Context(), q)
		if err != nil || got.Memories == nil || len(got.Memories) != 0 {
			t.Fatalf("search %+v: %+v, %v", q, got, err)
		}
	}
	got, err := r.service.SearchMemory(t.Context(), &adkmemory.SearchRequest{AppName: "travel", UserID: "kamal@example.com", Query: "early flights"})
	if err != nil || len(got.Memories) != 1 || got.Memories[0].Author != "user" ||
		!got.Memories[0].Timestamp.Equal(epoch.Add(2*time.Second)) || got.Memories[0].Content.Parts[0].Text != "I moved to Hanoi and hate early flights" {
		t.Fatalf("search: %+v, %v", got, err)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemoryServiceErrors(t *testing.T) {
	if _, err := agentmemadk.NewMemoryService(nil, nil); err == nil {
		t.Fatal("nil store accepted")
	}
	s := store.New(newMemDriver(t), nil)
	if _, err := agentmemadk.NewMemoryService(s, &agentmemadk.ServiceOptions{Folder: "a/b"}); !errors.Is(err, store.ErrInvalidPath) {
		t.Fatalf("folder a/b: %v", err)
	}
	if _, err := agentmemadk.NewMemoryService(s, &agentmemadk.ServiceOptions{MaxResults: -1}); err == nil {
		t.Fatal("negative MaxResults accepted")
	}
	svc, err := agentmemadk.NewMemoryService(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AddSessionToMemory(t.Context(), nil); err == nil {
		t.Fatal("nil session accepted")
	}
	if _, err := svc.SearchMemory(t.Context(), nil); err == nil {
		t.Fatal("nil request accepted")
	}
	if _, err := svc.SearchMemory(t.Context(), &adkmemory.SearchRequest{AppName: "a", Query: "x"}); !errors.Is(err, memory.ErrNoUser) {
		t.Fatalf("no user: %v", err)
	}
	if _, err := svc.SearchMemory(t.Context(), &adkmemory.SearchRequest{UserID: "u", Query: "x"}); !errors.Is(err, agentmemadk.ErrNoApp) {
		t.Fatalf("no app: %v", err)
	}
	got, err := svc.SearchMemory(t.Context(), &adkmemory.SearchRequest{AppName: "a", UserID: "u", Query: "  "})
	if err != nil || got.Memories == nil || len(got.Memories) != 0 {
		t.Fatalf("blank query: %+v, %v", got, err)
	}
}
