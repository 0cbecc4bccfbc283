package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// A server stops its store with the rest of its shutdown: the indexer
// finishes its queue within the deadline (a search embeds what it leaves),
// then the driver is closed.
func ExampleStore_Shutdown() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, &store.Options{Embedder: fakeEmbedder{model: "letters"}})
	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"})

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		fmt.Println("shutdown:", err)
	}
	fmt.Println(s.Close() == nil) // later calls return the first result
	// Output:
	// true
}
