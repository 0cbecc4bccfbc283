package memstore_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

func Example() {
	ctx := context.Background()
	s := store.New(memstore.New(), nil)
	defer s.Close()
	m, _ := s.Write(ctx, store.WriteRequest{Path: "ana/main/MEMORY.md", Content: "- vegetarian\n"})
	f, _ := s.Read(ctx, "ana/main/MEMORY.md", 100)
	fmt.Printf("%q %v\n", f.Content, f.Version == m.Version)
	fmt.Println(s.Capabilities().AtomicMutation)
	// Output:
	// "- vegetarian\n" true
	// true
}

func ExampleOpen() {
	ctx := context.Background()
	s, _ := memstore.Open(ctx, map[string]string{
		"kamal/main/MEMORY.md": "- lives in Hanoi\n",
		"kamal/main/travel.md": "aisle seats\n",
	})
	paths, _ := s.ListPaths(ctx, "kamal/", 10)
	fmt.Println(paths)
	// Output: [kamal/main/MEMORY.md kamal/main/travel.md]
}
