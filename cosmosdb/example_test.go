package cosmosdb_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

// Build the Cosmos DB client as usual, put the driver under a store, then
// create, read and delete a memory file. It needs an account (or a local
// server), so it is compiled but not run.
func Example() {
	ctx := context.Background()
	cred, err := azcosmos.NewKeyCredential(os.Getenv("COSMOS_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(os.Getenv("COSMOS_ENDPOINT"), cred, nil)
	if err != nil {
		log.Fatal(err)
	}

	d, err := cosmosdb.New(ctx, client, "agentmem", "memory", nil) // creates both when missing
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
