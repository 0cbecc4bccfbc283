package memory_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// A framework adapter lists the tools, routes each tool call to Call and
// puts the snapshot beside the next user prompt.
func Example() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	mem, _ := memory.New(s, &memory.Options{Guidance: new("")})

	for _, t := range mem.Tools() {
		fmt.Println(t.Name)
	}
	// Run 1: the model calls write_memory. Namespace comes from the
	// application (here the user id), never from the model.
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-1"}
	res, _ := mem.Call(ctx, in, "write_memory",
		json.RawMessage(`{"content": "- moved to Hanoi; hates early flights", "file": null, "old_text": null}`))
	w := res.(*memory.WriteResult)
	fmt.Println(w.File, w.Status, w.Replayed)

	// Run 2: the next model request carries the fresh snapshot.
	block, _ := mem.Snapshot(ctx, "kamal")
	fmt.Println(block)
	// Another user sees nothing.
	other, _ := mem.Snapshot(ctx, "ana")
	fmt.Printf("ana: %q\n", other)
	// Output:
	// write_memory
	// read_memory
	// delete_memory
	// search_memory
	// MEMORY.md created false
	// <memory>
	// ### MEMORY.md
	//
	// - moved to Hanoi; hates early flights
	// </memory>
	// ana: ""
}

// Mistakes the model can fix come back as a result it reads; a replayed
// call (same run and tool-call id, same arguments) is not applied twice.
func ExampleMemory_Call() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mem, _ := memory.New(store.New(d, nil), nil)
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-7"}

	res, err := mem.Call(ctx, in, "write_memory", json.RawMessage(`{"content": "x", "file": "../secret", "old_text": null}`))
	fmt.Printf("%T %v\n", res, err)

	args := json.RawMessage(`{"content": "- prefers aisle seats", "file": "travel", "old_text": null}`)
	first, _ := mem.Call(ctx, in, "write_memory", args)
	again, _ := mem.Call(ctx, in, "write_memory", args)
	fmt.Println(first.(*memory.WriteResult).Status, again.(*memory.WriteResult).Replayed)

	text, _ := mem.Call(ctx, memory.Invocation{Namespace: "kamal"}, "read_memory", json.RawMessage(`{"file": "travel.md"}`))
	fmt.Printf("%q\n", text)
	// Output:
	// *memory.ToolError <nil>
	// created true
	// "- prefers aisle seats\n"
}

// A background job (for example a hook that prunes old messages) adds a
// note next to the model's own writes, exactly once per operation id.
func ExampleAppend() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	opts := &memory.AppendOptions{OperationID: "prune/session-9/step-3"}
	for range 2 { // a retried job
		m, _ := memory.Append(ctx, s, "kamal/main/pruned.md", "- asked about Bangkok hotels", opts)
		fmt.Println("replayed:", m.Replayed)
	}
	f, _ := s.Read(ctx, "kamal/main/pruned.md", 1000)
	fmt.Printf("%q\n", f.Content)

	mem, _ := memory.New(s, &memory.Options{Guidance: new("")})
	block, _ := mem.Snapshot(ctx, "kamal")
	fmt.Println(block)
	// Output:
	// replayed: false
	// replayed: true
	// "- asked about Bangkok hotels\n"
	// <memory>
	// ### Other memory files
	//
	// - pruned.md
	// </memory>
}
