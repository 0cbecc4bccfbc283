package firestore_test

import (
	"context"
	"fmt"
	"log"

	gcfirestore "cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// Build the Firestore client as usual, put the driver under a store, then
// create, read and delete a memory file. It needs Google Cloud credentials or
// the Firestore emulator, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	client, err := gcfirestore.NewClient(ctx, "my-project") // FIRESTORE_EMULATOR_HOST is honoured
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	d, err := firestore.New(ctx, client, "agentmem", nil) // a collection; no index to create
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil) // the client stays the caller's
	defer s.Close()

	// Expected "" creates; an update or delete names the version it read.
	if _, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"}); err != nil {
		log.Fatal(err) // store.ErrConflict when the file already exists
	}
	f, err := s.Read(ctx, "kamal/main/MEMORY.md", 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(f.Content)
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: f.Path, Expected: f.Version}); err != nil {
		log.Fatal(err)
	}
}
