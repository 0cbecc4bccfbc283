package anthropic_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/anthropic"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

func Example() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	defer s.Close()
	tool, err := anthropic.New(s, nil)
	if err != nil {
		panic(err)
	}
	// In an agent loop these come from the model's tool_use blocks
	// (anthropic.HandleMessage does it all); the namespace is the user's id.
	for _, call := range []struct {
		id  string
		cmd anthropic.Command
	}{
		{"toolu_1", anthropic.Command{Command: "create", Path: "/memories/prefs.md", FileText: "drink: tea\n"}},
		{"toolu_2", anthropic.Command{Command: "str_replace", Path: "/memories/prefs.md", OldStr: "tea", NewStr: "coffee"}},
		{"toolu_2", anthropic.Command{Command: "str_replace", Path: "/memories/prefs.md", OldStr: "tea", NewStr: "coffee"}}, // a replay
		{"toolu_3", anthropic.Command{Command: "view", Path: "/memories"}},
		{"toolu_4", anthropic.Command{Command: "view", Path: "/memories/../etc/passwd"}},
	} {
		r, err := tool.Execute(ctx, "kamal@example.com", call.id, call.cmd)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s (error: %v)\n", r.Text, r.IsError)
	}
	// Output:
	// File created successfully at: /memories/prefs.md (error: false)
	// The memory file has been edited. Here is the snippet showing the change (with line numbers):
	//      1	drink: coffee
	//      2	 (error: false)
	// The memory file has been edited. Here is the snippet showing the change (with line numbers):
	//      1	drink: coffee
	//      2	 (error: false)
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 4.0K	/memories
	// 14B	/memories/prefs.md (error: false)
	// Path /memories/../etc/passwd would escape /memories directory (error: true)
}
