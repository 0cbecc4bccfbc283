package store_test

import (
	"errors"
	"testing"

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
