package filestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	d, err := filestore.New(ctx, dir, nil) // or store.Open(ctx, "file:"+dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil)
	defer s.Close()
	if _, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"}); err != nil {
		log.Fatal(err)
	}
	// The memory is a plain Markdown file a person can open.
	b, _ := os.ReadFile(filepath.Join(dir, "kamal", "main", "MEMORY.md"))
	fmt.Printf("%q\n", b)
	// Output: "- lives in Hanoi\n"
}
