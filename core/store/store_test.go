package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestNilDriver checks that a Store over a nil driver fails every call with
// ErrNoDriver instead of panicking.
func TestNilDriver(t *testing.T) {
	s := store.New(nil, nil)
	ctx := t.Context()
	_, rerr := s.Read(ctx, "a.md", 10)
	_, lerr := s.ListPaths(ctx, "", 10)
	_, werr := s.Write(ctx, store.WriteRequest{Path: "a.md", Content: "x"})
	_, derr := s.Delete(ctx, store.DeleteRequest{Path: "a.md"})
	_, serr := s.Search(ctx, store.SearchRequest{Query: "x", Limit: 1, MaxFiles: 1, MaxChars: 1, MaxFileChars: 1})
	_, oerr := s.GetOperation(ctx, store.Operation{ID: "i", Fingerprint: "f"})
	_, perr := s.PruneExpired(ctx)
	for name, err := range map[string]error{"Read": rerr, "ListPaths": lerr, "Write": werr, "Delete": derr,
		"Search": serr, "GetOperation": oerr, "PruneExpired": perr, "Close": s.Close()} {
		if !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("%s: %v, want ErrNoDriver", name, err)
		}
	}
	if c := s.Capabilities(); c != (store.Capabilities{}) {
		t.Errorf("capabilities = %+v, want none", c)
	}
}

// plain hides every optional interface of a driver, so the store runs its
// receipt algorithm over the nine primitives.
type plain struct{ driver.Driver }

// TestConflictMessage checks the text of a conflict on both paths: one
// prefix, the path and what to do, the sentinel's words not repeated; the
// sentinel and the driver's precondition error stay matchable.
func TestConflictMessage(t *testing.T) {
	for name, d := range map[string]driver.Driver{"atomic": newMemDriver(t), "primitives": plain{newMemDriver(t)}} {
		s := store.New(d, nil)
		for _, o := range []*store.Operation{nil, {ID: "op", Fingerprint: "fp"}} {
			ctx := t.Context()
			if _, err := s.Write(ctx, store.WriteRequest{Path: "k/main/y.md", Content: "x"}); err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatal(err)
			}
			_, err := s.Write(ctx, store.WriteRequest{Path: "k/main/y.md", Content: "y", Operation: o})
			const want = `agentmem: memory path "k/main/y.md" changed before it could be written: re-read it and retry with its current version`
			if err == nil || err.Error() != want || !errors.Is(err, store.ErrConflict) || !errors.Is(err, driver.ErrPrecondition) {
				t.Errorf("%s, operation %v: conflict = %v, want %q matching ErrConflict and driver.ErrPrecondition", name, o != nil, err, want)
			}
		}
	}
}

// TestOperationErrorDeterministic: an operation with more than one problem
// is refused naming the same one on every call (the id first).
func TestOperationErrorDeterministic(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	for range 32 {
		_, err := s.Write(t.Context(), store.WriteRequest{Path: "a.md", Content: "x", Operation: &store.Operation{}})
		if !errors.Is(err, store.ErrInvalidOperation) || !strings.Contains(err.Error(), ": id must be") {
			t.Fatalf("write with an empty id and fingerprint: %v, want the id named", err)
		}
	}
}
