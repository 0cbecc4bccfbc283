package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/postgres"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connect, put the driver under a store, then create, read and delete a
// memory file. It needs a PostgreSQL server, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	// A pgxpool.Pool of your own; store.Open(ctx, "postgres://…", nil)
	// opens one the store's Close closes instead.
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	d, err := postgres.New(ctx, pool, nil) // creates the tables when missing
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil) // s.Close closes d, not the pool
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
