package store_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// printer is an Observer that prints each operation as it ends, and each
// settlement; it leaves out the store's background work on its search
// index (OpIndex), which runs beside the calls.
type printer struct{}

func (printer) ObserveOperation(ctx context.Context, op store.OperationInfo) (context.Context, func(store.OperationResult)) {
	if op.Op == store.OpIndex {
		return ctx, nil
	}
	return ctx, func(r store.OperationResult) { fmt.Printf("%s: %s (%d)\n", op.Op, r.Outcome, r.Count) }
}

func (printer) ObserveSettlement(_ context.Context, s store.Settlement) { fmt.Println("settled:", s) }

// An Observer sees every operation of a store with its outcome, never its
// content or path: the hook tracing and metrics hang on (the otel module's
// NewObserver makes it spans and counters).
func ExampleObserver() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := store.New(d, &store.Options{Observer: printer{}})
	op := &store.Operation{ID: "run-7/call-1", Fingerprint: "sha256-of-args"}
	m, _ := s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Bangkok\n", Operation: op})
	_, _ = s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Bangkok\n", Operation: op})
	_, _ = s.Write(ctx, store.WriteRequest{Path: "ana/main/trip.md", Content: "Paris\n", Expected: "stale"})
	_, _ = s.Read(ctx, "ana/main/trip.md", 100)
	_, _ = s.Read(ctx, "ana/main/absent.md", 100)
	_, _ = s.Search(ctx, search.Request{Prefix: "ana/main/", Query: "bangkok", Limit: 5, MaxFiles: 50, MaxChars: 500, MaxFileChars: 1000})
	_, _ = s.Delete(ctx, store.DeleteRequest{Path: "ana/main/trip.md", Expected: m.Version})
	// Output:
	// Write: ok (0)
	// Write: replayed (0)
	// Write: conflict (0)
	// Read: ok (1)
	// Read: not_found (0)
	// Search: ok (1)
	// Delete: ok (0)
}
