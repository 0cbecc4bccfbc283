package genkit_test

import (
	"context"
	"fmt"
	"log"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	agentmemgenkit "github.com/agentmem/agentmem/genkit"
	"github.com/agentmem/agentmem/genkit/genkittest"
)

// Give a Genkit generation a notebook and run one turn in which the model
// saves a fact. A scripted model stands in for Gemini (the googlegenai
// plugin in an application), and memstore for any backend driver.
func Example() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	mem, err := memory.New(s, nil) // namespace = the user id of the generation
	if err != nil {
		log.Fatal(err)
	}
	nb, err := agentmemgenkit.Define(g, mem, nil)
	if err != nil {
		log.Fatal(err)
	}
	model := genkittest.Define(g, "test/scripted", map[string][]genkittest.Step{"I moved to Hanoi.": {
		genkittest.Call("call-1", memory.WriteTool, map[string]any{"content": "- lives in Hanoi", "file": nil, "old_text": nil}),
		genkittest.Answer("Noted."),
	}})
	resp, err := genkit.Generate(memory.WithUserID(ctx, "kamal"), g,
		ai.WithModel(model), ai.WithSystem("You are a travel assistant."), ai.WithPrompt("I moved to Hanoi."),
		ai.WithTools(nb.Tools()...), ai.WithUse(nb))
	if err != nil {
		log.Fatal(err)
	}
	f, err := s.Read(ctx, "kamal/main/"+memory.MainFile, 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text())
	fmt.Print(f.Content)
	// Output:
	// Noted.
	// - lives in Hanoi
}
