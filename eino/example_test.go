package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudwego/eino/adk"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	agentmemeino "github.com/agentmem/agentmem/eino"
	"github.com/agentmem/agentmem/eino/einotest"
)

// Mount a notebook on an Eino ChatModelAgent and run one turn in which the
// model saves a fact. A scripted model stands in for a real chat model (an
// eino-ext model in an application), and memstore for any backend driver.
func Example() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	mem, err := memory.New(s, nil) // namespace = the user id of the run
	if err != nil {
		log.Fatal(err)
	}
	mw, err := agentmemeino.NewMiddleware(mem, nil)
	if err != nil {
		log.Fatal(err)
	}
	llm := einotest.NewModel(map[string][]einotest.Step{"I moved to Hanoi.": {
		einotest.Call("call-1", memory.WriteTool, map[string]any{"content": "- lives in Hanoi", "file": nil, "old_text": nil}),
		einotest.Text("Noted."),
	}})
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "assistant", Description: "travel assistant", Instruction: "You are a travel assistant.", Model: llm,
		Handlers: []adk.ChatModelAgentMiddleware{mw},
	})
	if err != nil {
		log.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	iter := runner.Query(memory.WithUserID(ctx, "kamal"), "I moved to Hanoi.")
	for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
	}
	f, err := s.Read(ctx, "kamal/main/"+memory.MainFile, 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(f.Content)
	// Output: - lives in Hanoi
}
