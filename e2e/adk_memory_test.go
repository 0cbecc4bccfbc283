package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/loadmemorytool"
	"google.golang.org/adk/v2/tool/preloadmemorytool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
)

var e2eEpoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// e2eRecall shares words with kamal's first session, as preload_memory
// searches with the prompt itself.
const e2eRecall = "Any early flights from Hanoi?"

// TestADKMemoryService drives ADK's own load_memory and preload_memory
// tools over agentmemadk.MemoryService on every backend in both modes.
func TestADKMemoryService(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "adk_memory_service", Run: adkMemoryService})
	}
}

// adkMemoryService: kamal's first session is added to memory three times
// (and once more through a second service, as after a restart), and each
// event is stored once; in a new session, preload_memory puts the fact in
// the system instruction of the first request and load_memory returns it
// with author and timestamp; ana, and kamal in another app, find nothing
// (neither preloaded nor loaded).
func adkMemoryService(t *testing.T, e *contract.Env) {
	newService := func() *agentmemadk.MemoryService {
		svc, err := agentmemadk.NewMemoryService(e.Store, nil)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newService()
	llm := adktest.NewModel(map[string][]adktest.Step{
		e2eRemember: {adktest.Text("Noted: Hanoi, and no early flights.")},
		e2eRecall: {
			adktest.Call("load-1", "load_memory", map[string]any{"query": "hanoi flights"}),
			adktest.Text("Late flights only, from Hanoi."),
		},
	})
	a, err := llmagent.New(llmagent.Config{
		Name: "travel_agent", Model: llm, Instruction: "You book travel.",
		Tools: []tool.Tool{loadmemorytool.New(), preloadmemorytool.New()},
	})
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.InMemoryService()
	newRunner := func(app string) *runner.Runner {
		r, err := runner.New(runner.Config{AppName: app, Agent: a, SessionService: sessions, MemoryService: svc, AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := newRunner(e2eApp)
	run := func(r *runner.Runner, user, sessionID, prompt string) {
		t.Helper()
		ctx := adktest.Deterministic(ctx(t), sessionID, e2eEpoch)
		for _, err := range r.Run(ctx, user, sessionID, genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("%s: %q: %v", user, prompt, err)
			}
		}
	}

	run(r, "kamal", "kamal-1", e2eRemember)
	got, err := sessions.Get(ctx(t), &session.GetRequest{AppName: e2eApp, UserID: "kamal", SessionID: "kamal-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*agentmemadk.MemoryService{svc, svc, svc, newService()} {
		if err := s.AddSessionToMemory(ctx(t), got.Session); err != nil {
			t.Fatal(err)
		}
	}
	dir := "kamal/adk-sessions/" + e2eApp + "/"
	stored := list(t, e.Store, "kamal/", 10) // the prompt's event and the answer's
	if len(stored) != 2 || stored[0] != dir+"kamal-1__kamal-1-2.md" || !strings.HasPrefix(stored[1], dir+"kamal-1__kamal-1-") {
		t.Fatalf("stored events %q", stored)
	}
	f := read(t, e.Store, dir+"kamal-1__kamal-1-2.md", 1000)
	eq(t, "event file", f.Content, "### user · 2026-11-30T09:00:02Z\n\n"+e2eRemember+"\n")

	// A new session: preload_memory (the first request) and load_memory.
	run(r, "kamal", "kamal-2", e2eRecall)
	reqs := llm.Requests()
	eq(t, "model requests", len(reqs), 3)
	if sys := adktest.SystemText(reqs[1].LLMRequest); !strings.Contains(sys, "<PAST_CONVERSATIONS>") || !strings.Contains(sys, "user: "+e2eRemember) {
		t.Fatalf("preload: system instruction %q", sys)
	}
	res := adktest.FunctionResponse(reqs[2].LLMRequest, "load-1")
	mems, _ := res["memories"].([]any)
	if len(mems) != 2 {
		t.Fatalf("load_memory: %v", res)
	}
	// Both events match; find the user's by its id (BM25 may rank the
	// shorter answer first).
	var b []byte
	for _, m := range mems {
		if mb, _ := json.Marshal(m); strings.Contains(string(mb), `"ID":"kamal-1-2"`) {
			b = mb
		}
	}
	for _, want := range []string{`"Author":"user"`, `"ID":"kamal-1-2"`, `"Timestamp":"2026-11-30T09:00:02Z"`, e2eRemember} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("load_memory entry %s lacks %s", b, want)
		}
	}

	// ana, and kamal in another app, find nothing.
	run(r, "ana", "ana-1", e2eRecall)
	run(newRunner("other-app"), "kamal", "kamal-3", e2eRecall)
	reqs = llm.Requests()
	for _, i := range []int{3, 4, 5, 6} {
		if m, _ := adktest.FunctionResponse(reqs[i].LLMRequest, "load-1")["memories"].([]any); len(m) != 0 {
			t.Fatalf("request %d: load_memory found %v", i, m)
		}
		if leaks(reqs[i].LLMRequest, "Hanoi and hate") {
			t.Fatalf("request %d mentions kamal's session", i)
		}
	}
}

// TestADKHistoryWindow: a 40-content scripted ADK conversation (20
// prompts, 20 answers) with a window of 20, on every backend in both
// modes.
func TestADKHistoryWindow(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "adk_history_window", Run: adkHistoryWindow})
	}
}

// adkHistoryWindow: every model request carries at most 20 contents, and
// pruned.md holds the first 20 contents (prompts and answers 1–10), each
// exactly once, in order, also after the run is replayed (same event ids)
// by a new process: a new toolset, a new session service.
func adkHistoryWindow(t *testing.T, e *contract.Env) {
	mem, err := memory.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts, scripts := adktest.Conversation(20)
	replay := func() *adktest.Model {
		llm := adktest.NewModel(scripts)
		ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 20}}})
		a, err := llmagent.New(llmagent.Config{Name: "travel_agent", Model: llm, Toolsets: []tool.Toolset{ts}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{
			AppName: e2eApp, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true,
			PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{ts.Plugin()}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := adktest.Deterministic(ctx(t), "ev", e2eEpoch)
		for _, p := range prompts {
			for _, err := range r.Run(ctx, "kamal", "kamal-1", genai.NewContentFromText(p, genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					t.Fatalf("%q: %v", p, err)
				}
			}
		}
		if err := ts.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return llm
	}
	check := func(what string) {
		t.Helper()
		f := read(t, e.Store, "kamal/main/pruned.md", 1<<16)
		if f == nil {
			t.Fatalf("%s: no pruned.md", what)
		}
		lines := strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")
		if len(lines) != 20 {
			t.Fatalf("%s: pruned.md has %d lines:\n%s", what, len(lines), f.Content)
		}
		for i, line := range lines {
			n := i/2 + 1
			head, tail := "- user (", fmt.Sprintf("): prompt %d", n)
			if i%2 == 1 {
				head, tail = "- travel_agent (", fmt.Sprintf("): answer %d", n)
			}
			if !strings.HasPrefix(line, head) || !strings.HasSuffix(line, tail) {
				t.Fatalf("%s: line %d of pruned.md = %q", what, i+1, line)
			}
		}
	}
	llm := replay()
	reqs := llm.Requests()
	eq(t, "model requests", len(reqs), 20)
	for i, req := range reqs {
		if len(req.Contents) > 20 {
			t.Fatalf("request %d carries %d contents", i+1, len(req.Contents))
		}
	}
	eq(t, "last request starts at", reqs[19].Contents[0].Parts[0].Text, "prompt 11")
	check("run")
	replay()
	check("replay")
	eqSlice(t, "kamal's files", list(t, e.Store, "kamal/", 10), []string{"kamal/main/pruned.md"})
}
