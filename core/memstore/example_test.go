package memstore_test

import (
	"context"
	"fmt"

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
	m, _ := s.Write(ctx, store.WriteRequest{Path: "ana/main/MEMORY.md", Content: "- vegetarian\n"})
	f, _ := s.Read(ctx, "ana/main/MEMORY.md", 100)
	fmt.Printf("%q %v\n", f.Content, f.Version == m.Version)
	fmt.Println(s.Capabilities().AtomicMutation)
	// Output:
	// "- vegetarian\n" true
	// true
}

// The URL way: store.Open with "mem://" gives a store over a new driver.
func Example_url() {
	ctx := context.Background()
	s, err := store.Open(ctx, "mem://", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, p := range []string{"kamal/main/MEMORY.md", "kamal/main/travel.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "- a note\n"}); err != nil {
			fmt.Println(err)
			return
		}
	}
	paths, _ := s.ListPaths(ctx, "kamal/", 10)
	fmt.Println(paths)
	// Output: [kamal/main/MEMORY.md kamal/main/travel.md]
}
