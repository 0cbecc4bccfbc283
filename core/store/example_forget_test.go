package store_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/store"
)

// Forgetting a user erases their namespace's files, history and search
// index rows, and nothing of anyone else's.
func ExampleStore_Forget() {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://", &store.Options{History: &store.HistoryOptions{}})
	defer s.Close()
	s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"})
	s.Write(ctx, store.WriteRequest{Path: "mai/main/MEMORY.md", Content: "- lives in Hue\n"})

	st, err := s.Forget(ctx, "kamal/", &store.ForgetOptions{Confirm: func(_ context.Context, f store.ForgetFound) error {
		fmt.Printf("erasing %d files under %s (history: %v)\n", f.Files, f.Prefix, f.History)
		return nil // or an error, to erase nothing
	}})
	fmt.Println(st.Deleted, st.Kept, st.HistoryEntries, err)
	paths, _ := s.ListPaths(ctx, "", 10)
	fmt.Println(paths)
	// Output:
	// erasing 1 files under kamal/ (history: true)
	// 1 0 2 <nil>
	// [mai/main/MEMORY.md]
}
