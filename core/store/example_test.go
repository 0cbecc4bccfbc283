package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
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

	// Create: Expected "" means the path must not exist yet.
	m, _ := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"})
	// Update: name the version you read; a stale one is refused.
	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n- hates early flights\n", Expected: m.Version})
	_, err = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "lost update", Expected: m.Version})
	fmt.Println(errors.Is(err, store.ErrConflict))

	f, _ := s.Read(ctx, "kamal/main/MEMORY.md", 16)
	fmt.Printf("%q truncated=%v\n", f.Content, f.Truncated)
	// Output:
	// true
	// "- lives in Hanoi" truncated=true
}

func ExampleStore_Write_idempotent() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	op := &store.Operation{ID: "run-7/call-1", Fingerprint: "sha256-of-args"}

	first, _ := s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Bangkok\n", Operation: op})
	// A retry or a durable replay of the same operation writes nothing and
	// returns the original result.
	again, _ := s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Bangkok\n", Operation: op})
	fmt.Println(again.Replayed, again.Version == first.Version)

	// The same id with other arguments is a bug in the caller.
	_, err = s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Paris\n", Operation: &store.Operation{ID: op.ID, Fingerprint: "other"}})
	fmt.Println(errors.Is(err, store.ErrOperationConflict))
	// Output:
	// true true
	// true
}

func ExampleStore_Search() {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://", nil)
	for p, c := range map[string]string{
		"kamal/main/MEMORY.md":  "- lives in Hanoi\n- hates early flights\n",
		"kamal/main/travel.md":  "Prefers aisle seats. No flights before 10am.\n",
		"ana/main/MEMORY.md":    "- flights: anything\n",
		"kamal/main/old/log.md": "flights flights flights (nested: not in the scope)\n",
	} {
		_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: c})
	}
	res, _ := s.Search(ctx, search.Request{
		Prefix: "kamal/main/", Query: "early flight", Limit: 5, MaxFiles: 100, MaxChars: 200, MaxFileChars: 4000,
	})
	for _, m := range res.Matches {
		fmt.Printf("%s %.2f %q\n", m.Path, m.Score, m.Snippet)
	}
	fmt.Println("scanned", res.Scanned)
	// The reference notebook's literal scoring counts substrings.
	res, _ = s.Search(ctx, search.Request{
		Prefix: "kamal/main/", Query: "flights", Mode: search.Literal, Limit: 5, MaxFiles: 100, MaxChars: 200, MaxFileChars: 4000,
	})
	for _, m := range res.Matches {
		fmt.Printf("%s %.0f\n", m.Path, m.Score)
	}
	// Output:
	// kamal/main/MEMORY.md 0.90 "- lives in Hanoi\n- hates early flights\n"
	// kamal/main/travel.md 0.18 "Prefers aisle seats. No flights before 10am.\n"
	// scanned 2
	// kamal/main/MEMORY.md 1
	// kamal/main/travel.md 1
}

func ExampleStore_ListPaths() {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://", nil)
	for p, c := range map[string]string{"tenant/main/a.md": "", "tenant-b/main/b.md": "", "tenant/main/c.md": ""} {
		_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: c})
	}
	paths, _ := s.ListPaths(ctx, "tenant/", 10)
	fmt.Println(paths)
	// Output: [tenant/main/a.md tenant/main/c.md]
}

// Open a store by URL. A backend's package registers its schemes when
// imported (this file imports core/memstore, which registers "mem"); a
// program that takes the URL from its configuration blank-imports the
// backends it supports, such as _ "github.com/agentmem/agentmem/sqlite".
func ExampleOpen() {
	ctx := context.Background()
	s, err := store.Open(ctx, "mem://", nil) // or "file:notes", "sqlite:memory.db", "postgres://…"
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close() // closes the driver and whatever the URL's opener created

	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"})
	f, _ := s.Read(ctx, "kamal/main/MEMORY.md", 100)
	fmt.Printf("%q\n", f.Content)

	_, err = store.Open(ctx, "dynamodb://agentmem", nil) // the dynamodb package is not imported here
	fmt.Println(errors.Is(err, store.ErrUnknownScheme))
	// Output:
	// "- lives in Hanoi\n"
	// true
}

// Walk every path under a prefix, however many there are, one bounded page
// at a time.
func ExampleStore_Walk() {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://", nil)
	for p, c := range map[string]string{
		"kamal/main/MEMORY.md":        "- lives in Hanoi\n",
		"kamal/main/trips/bangkok.md": "hotels\n",
		"kamala/main/MEMORY.md":       "another user\n",
	} {
		_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: c})
	}
	defer s.Close()
	for path, err := range s.Walk(ctx, "kamal/", 0) { // 0: the default page size
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(path)
	}
	// Output:
	// kamal/main/MEMORY.md
	// kamal/main/trips/bangkok.md
}

func ExampleStore_ReadAndList() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	defer s.Close()
	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"})
	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/trips.md", Content: "- Bangkok in May\n"})

	// A file and a listing in one round trip, as a per-request snapshot
	// needs them (one request on a driver.SnapshotReader such as memstore).
	r, _ := s.ReadAndList(ctx, store.ReadAndListRequest{Path: "kamal/main/MEMORY.md", MaxChars: 100, Prefix: "kamal/main/", Limit: 10})
	fmt.Printf("%q %v\n", r.File.Content, r.Paths)
	// Output:
	// "- lives in Hanoi\n" [kamal/main/MEMORY.md kamal/main/trips.md]
}

func ExampleStore_Append() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, nil)
	defer s.Close()

	// The first append creates the file; each one adds a line. Concurrent
	// appenders never conflict (memstore appends under its lock).
	_, _ = s.Append(ctx, store.AppendRequest{Path: "kamal/main/jobs.md", Text: "- nightly summary done  \n\n", MaxChars: 100})
	op := &store.Operation{ID: "import/42", Fingerprint: "sha256-of-text"}
	_, _ = s.Append(ctx, store.AppendRequest{Path: "kamal/main/jobs.md", Text: "- imported 3 notes", MaxChars: 100, Operation: op})
	again, _ := s.Append(ctx, store.AppendRequest{Path: "kamal/main/jobs.md", Text: "- imported 3 notes", MaxChars: 100, Operation: op})
	fmt.Println(again.Replayed)

	// The bound holds: nothing lands past MaxChars.
	_, err = s.Append(ctx, store.AppendRequest{Path: "kamal/main/jobs.md", Text: "- a long entry", MaxChars: 50})
	fmt.Println(errors.Is(err, store.ErrTooLarge))

	f, _ := s.Read(ctx, "kamal/main/jobs.md", 100)
	fmt.Printf("%q\n", f.Content)
	// Output:
	// true
	// true
	// "- nightly summary done\n- imported 3 notes\n"
}
