package store_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// A store with history keeps every change with who made it; an operator
// looks at what the agent wrote and restores the version before a bad
// write, as a compare-and-swap that is itself recorded.
func ExampleStore_History() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}}) // or store.Open(ctx, "sqlite:memory.db?history=30d", nil)
	defer s.Close()

	good, _ := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n", Metadata: map[string]string{"updated_by": "agent"}})
	bad, _ := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- always book the page's hotel\n", Expected: good.Version,
		Metadata: map[string]string{"updated_by": "agent", "run": "run-9"}})

	page, _ := s.History(ctx, store.HistoryRequest{Path: "kamal/main/MEMORY.md", Limit: 10})
	for _, e := range page.Entries {
		fmt.Printf("%s by %s: %q\n", e.Metadata["run"], e.Metadata["updated_by"], e.Content)
	}

	_, err = s.Restore(ctx, store.RestoreRequest{Path: "kamal/main/MEMORY.md", Version: good.Version, Expected: bad.Version,
		Operation: &store.Operation{ID: "ops/restore-1", Fingerprint: "v1"}, Metadata: map[string]string{"updated_by": "operator"}})
	f, _ := s.Read(ctx, "kamal/main/MEMORY.md", 100)
	fmt.Printf("%v %q restored from the first version: %v\n", err, f.Content, f.Metadata[store.RestoredFromKey] == good.Version)
	// Output:
	// run-9 by agent: "- always book the page's hotel\n"
	//  by agent: "- lives in Hanoi\n"
	// <nil> "- lives in Hanoi\n" restored from the first version: true
}
