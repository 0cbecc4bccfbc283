package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/sqlite"
)

// Open a database file, write and read a memory file through the store, and
// show the snapshot the notebook injects for that user.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	d, err := sqlite.New(ctx, filepath.Join(dir, "memory.db"), nil) // created if missing
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil) // s.Close closes d
	defer s.Close()
	m, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"}) // Expected "": create
	if err != nil {
		log.Fatal(err)
	}
	f, err := s.Read(ctx, "kamal/main/MEMORY.md", 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q same version: %v\n", f.Content, f.Version == m.Version)

	mem, err := memory.New(s, nil) // the notebook an agent adapter mounts
	if err != nil {
		log.Fatal(err)
	}
	block, err := mem.Snapshot(ctx, "kamal")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(block)
	// Output:
	// "- lives in Hanoi\n" same version: true
	// <memory>
	// ### MEMORY.md
	//
	// - lives in Hanoi
	// </memory>
}
