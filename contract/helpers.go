package contract

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

func write(t *testing.T, s *store.Store, path, content, expected string) store.Mutation {
	t.Helper()
	m, err := s.Write(ctx(t), store.WriteRequest{Path: path, Content: content, Expected: expected})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return m
}

func create(t *testing.T, s *store.Store, path, content string) string {
	t.Helper()
	return write(t, s, path, content, "").Version
}

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

func mustErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
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
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func op(id, fp string) *store.Operation { return &store.Operation{ID: id, Fingerprint: fp} }

// AppendOnce appends line to the file at path through a compare-and-swap
// retry loop (read, append, write with the version read), as the notebook
// tool does, all attempts carrying the same operation (nil = none). It
// retries conflicts up to attempts times with a small random backoff.
func AppendOnce(ctx context.Context, s *store.Store, path, line string, o *store.Operation, attempts int) (store.Mutation, error) {
	var err error
	for i := 0; i < attempts; i++ {
		expected, base := "", ""
		f, rerr := s.Read(ctx, path, 1<<20)
		switch {
		case rerr == nil:
			expected, base = f.Version, f.Content
		case !errors.Is(rerr, store.ErrNotFound):
			return store.Mutation{}, rerr
		}
		var m store.Mutation
		m, err = s.Write(ctx, store.WriteRequest{Path: path, Content: base + line + "\n", Expected: expected, Operation: o})
		if !errors.Is(err, store.ErrConflict) {
			return m, err
		}
		time.Sleep(time.Duration(rand.IntN(200*(i%8+1))) * time.Microsecond)
	}
	return store.Mutation{}, fmt.Errorf("append %s: gave up after %d attempts: %w", path, attempts, err)
}

// DeleteOnce deletes path through a compare-and-swap retry loop with the
// same operation on every attempt.
func DeleteOnce(ctx context.Context, s *store.Store, path string, o *store.Operation, attempts int) (store.Mutation, error) {
	var err error
	for i := 0; i < attempts; i++ {
		expected := ""
		f, rerr := s.Read(ctx, path, 1)
		switch {
		case rerr == nil:
			expected = f.Version
		case !errors.Is(rerr, store.ErrNotFound):
			return store.Mutation{}, rerr
		}
		var m store.Mutation
		m, err = s.Delete(ctx, store.DeleteRequest{Path: path, Expected: expected, Operation: o})
		if !errors.Is(err, store.ErrConflict) {
			return m, err
		}
	}
	return store.Mutation{}, fmt.Errorf("delete %s: gave up after %d attempts: %w", path, attempts, err)
}
