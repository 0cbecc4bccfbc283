package e2e_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

func ctx(t *testing.T) context.Context { return t.Context() }

// read returns the file at path, or nil when there is none.
func read(t *testing.T, s *store.Store, path string, maxChars int) *store.File {
	t.Helper()
	f, err := s.Read(ctx(t), path, maxChars)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return f
}

func list(t *testing.T, s *store.Store, prefix string, limit int) []string {
	t.Helper()
	p, err := s.ListPaths(ctx(t), prefix, limit)
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	return p
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func eqSlice(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}
