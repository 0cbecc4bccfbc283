package pruned_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// A hook that must not wait for the store (a pruned-history window) queues
// its appends; each operation id lands once, in order, and Close flushes
// on shutdown.
func ExampleAppendQueue() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	mem, _ := memory.New(s, nil) // failures follow Options.InjectionErrors
	q, err := pruned.NewAppendQueue(mem, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"event-1", "event-2", "event-1"} { // event-1 pruned again
		_ = q.Add(ctx, "kamal/main/pruned.md", "- user: "+id, "prune/"+id)
	}
	if err := q.Close(ctx); err != nil {
		fmt.Println(err)
	}
	f, _ := s.Read(ctx, "kamal/main/pruned.md", 1000)
	fmt.Print(f.Content)
	// Output:
	// - user: event-1
	// - user: event-2
}

// A rotating append never fails for size: past the bound, the series goes
// on in its next file, and a replay is answered wherever the original
// landed.
func ExampleAppendSeries() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	opts := func(op string) *memory.AppendOptions {
		return &memory.AppendOptions{OperationID: op, MaxMemorySize: 40}
	}
	retention := &pruned.RotateOptions{MaxFiles: 3}
	for i := 1; i <= 8; i++ {
		if _, err := pruned.AppendSeries(ctx, s, "kamal/main/pruned.md", fmt.Sprintf("- pruned turn %d", i), opts(fmt.Sprint("prune/", i)), retention); err != nil {
			fmt.Println(err)
		}
	}
	m, _ := pruned.AppendSeries(ctx, s, "kamal/main/pruned.md", "- pruned turn 1", opts("prune/1"), retention)
	fmt.Println("replayed:", m.Replayed)
	files, _ := pruned.SeriesPaths(ctx, s, "kamal/main/pruned.md")
	for _, p := range files {
		f, _ := s.Read(ctx, p, 100)
		fmt.Printf("%s: %q\n", p, f.Content)
	}
	// Output:
	// replayed: true
	// kamal/main/pruned_0002.md: "- pruned turn 3\n- pruned turn 4\n"
	// kamal/main/pruned_0003.md: "- pruned turn 5\n- pruned turn 6\n"
	// kamal/main/pruned_0004.md: "- pruned turn 7\n- pruned turn 8\n"
}
