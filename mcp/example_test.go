package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// A stdio server serves one user; here a client talks to it over in-memory
// transports, as a test would.
func Example() {
	ctx := context.Background()
	mem, _ := memory.New(store.New(memstore.New(), nil), nil)
	srv, _ := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal")})

	clientT, serverT := mcpsdk.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, serverT, nil) // in a real program: srv.Run(ctx, &mcpsdk.StdioTransport{})
	defer ss.Close()
	cs, _ := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	defer cs.Close()

	for t := range cs.Tools(ctx, nil) {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "write_memory",
		Arguments: map[string]any{"content": "- moved to Hanoi", "file": nil, "old_text": nil}})
	var w memory.WriteResult
	_ = json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &w)
	fmt.Println(w.File, w.Status, w.Replayed)

	file, _ := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memory:///MEMORY.md"})
	fmt.Printf("%q\n", file.Contents[0].Text)
	// Output:
	// delete_memory
	// read_memory
	// search_memory
	// write_memory
	// MEMORY.md created false
	// "- moved to Hanoi\n"
}
