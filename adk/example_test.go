package adk_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// Mount a notebook on an ADK agent and run one turn in which the model saves
// a fact. A scripted model stands in for Gemini (gemini.NewModel in an
// application), and memstore for any backend driver.
func Example() {
	ctx := context.Background()
	s := store.New(memstore.New(), nil)
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
