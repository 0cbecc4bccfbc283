package adk_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	adkmemory "google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/loadmemorytool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// Mount a notebook on an ADK agent and run one turn in which the model saves
// a fact. A scripted model stands in for Gemini (gemini.NewModel in an
// application), and memstore for any backend driver.
func Example() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	mem, err := memory.New(s, nil) // namespace = the ADK user id
	if err != nil {
		log.Fatal(err)
	}
	llm := adktest.NewModel(map[string][]adktest.Step{"I moved to Hanoi.": {
		adktest.Call("call-1", memory.WriteTool, map[string]any{"content": "- lives in Hanoi", "file": nil, "old_text": nil}),
		adktest.Text("Noted."),
	}})
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: llm, Instruction: "You are a travel assistant.",
		Toolsets: []tool.Toolset{agentmemadk.NewToolset(mem, nil)},
	})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "travel", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		log.Fatal(err)
	}
	msg := genai.NewContentFromText("I moved to Hanoi.", genai.RoleUser)
	for _, err := range r.Run(ctx, "kamal", "session-1", msg, agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
	}
	f, err := s.Read(ctx, "kamal/main/"+memory.MainFile, 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(f.Content)
	// Output: - lives in Hanoi
}

// Bound every model request to the latest 4 contents: older ones leave the
// request (never the session) and land in the user's pruned.md, which the
// model still finds through its memory tools. The toolset's plugin tells
// the window the session; Close flushes the background appends.
func ExampleHistoryWindow() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	prompts, scripts := adktest.Conversation(3) // "prompt 1" → "answer 1", …
	llm := adktest.NewModel(scripts)
	ts := agentmemadk.NewToolset(mem, &agentmemadk.Options{HistoryWindow: agentmemadk.HistoryWindow{WindowOptions: pruned.WindowOptions{Max: 4}}})
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Toolsets: []tool.Toolset{ts}})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		AppName: "travel", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{ts.Plugin()}},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx = adktest.Deterministic(ctx, "ev", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) // fixed ids and times for the output
	for _, p := range prompts {
		for _, err := range r.Run(ctx, "kamal", "session-1", genai.NewContentFromText(p, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := ts.Close(ctx); err != nil { // on shutdown
		log.Fatal(err)
	}
	for _, req := range llm.Requests() {
		fmt.Println(len(req.Contents), "contents, from", req.Contents[0].Parts[0].Text)
	}
	f, err := s.Read(ctx, "kamal/main/pruned.md", 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(f.Content)
	// Output:
	// 1 contents, from prompt 1
	// 3 contents, from prompt 1
	// 3 contents, from prompt 2
	// - user (2026-11-30T09:00:02Z): prompt 1
	// - assistant (2026-11-30T09:00:03Z): answer 1
}

// Give an ADK runner a long-term memory service over any agentmem store:
// sessions added to it become Markdown files under the user's namespace,
// and ADK's load_memory and preload_memory tools search them.
func ExampleMemoryService() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	svc, err := agentmemadk.NewMemoryService(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	llm := adktest.NewModel(map[string][]adktest.Step{"I moved to Hanoi.": {adktest.Text("Noted.")}})
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Tools: []tool.Tool{loadmemorytool.New()}})
	if err != nil {
		log.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "travel", Agent: a, SessionService: sessions, MemoryService: svc, AutoCreateSession: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, err := range r.Run(ctx, "kamal", "session-1", genai.NewContentFromText("I moved to Hanoi.", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
	}
	got, err := sessions.Get(ctx, &session.GetRequest{AppName: "travel", UserID: "kamal", SessionID: "session-1"})
	if err != nil {
		log.Fatal(err)
	}
	if err := svc.AddSessionToMemory(ctx, got.Session); err != nil { // as often as you like
		log.Fatal(err)
	}
	res, err := svc.SearchMemory(ctx, &adkmemory.SearchRequest{AppName: "travel", UserID: "kamal", Query: "hanoi"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Memories {
		fmt.Printf("%s: %s\n", m.Author, m.Content.Parts[0].Text)
	}
	// Output: user: I moved to Hanoi.
}
