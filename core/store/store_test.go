package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestNilDriver checks that a Store over a nil driver fails every call with
// ErrNoDriver instead of panicking.
func TestNilDriver(t *testing.T) {
	for _, opts := range []*store.Options{nil, {Embedder: constEmbedder{}}} {
		testNilDriver(t, store.New(nil, opts))
	}
}

// constEmbedder gives every text the same vector.
type constEmbedder struct{}

func (constEmbedder) Model() string { return "const" }
func (constEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

func testNilDriver(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.WaitIndexed(ctx); err != nil {
		t.Errorf("WaitIndexed: %v, want nil (nothing is queued)", err)
	}
	_, rierr := s.Reindex(ctx, "k/")
	_, fierr := s.ForgetIndex(ctx, "k/")
	_, rerr := s.Read(ctx, "a.md", 10)
	_, lerr := s.ListPaths(ctx, "", 10)
	_, werr := s.Write(ctx, store.WriteRequest{Path: "a.md", Content: "x"})
	_, derr := s.Delete(ctx, store.DeleteRequest{Path: "a.md"})
	_, serr := s.Search(ctx, search.Request{Query: "x", Limit: 1, MaxFiles: 1, MaxChars: 1, MaxFileChars: 1})
	_, oerr := s.GetOperation(ctx, store.Operation{ID: "i", Fingerprint: "f"})
	_, perr := s.PruneExpired(ctx)
	for name, err := range map[string]error{"Read": rerr, "ListPaths": lerr, "Write": werr, "Delete": derr,
		"Search": serr, "GetOperation": oerr, "PruneExpired": perr, "Reindex": rierr, "ForgetIndex": fierr, "Close": s.Close()} {
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
