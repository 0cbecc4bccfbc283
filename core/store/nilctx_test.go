package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// TestOpenersRefuseNilContext: every opener says what to pass and wraps
// ErrNilArgument for a nil context, instead of panicking or free text.
func TestOpenersRefuseNilContext(t *testing.T) {
	var nilCtx context.Context
	_, err1 := store.Open(nilCtx, "mem://", nil)
	_, err2 := store.OpenDriver(nilCtx, "mem://")
	_, err3 := store.OpenEmbedder(nilCtx, "wordvec")
	for i, err := range []error{err1, err2, err3} {
		if !errors.Is(err, store.ErrNilArgument) {
			t.Errorf("opener %d: err = %v, want one wrapping ErrNilArgument", i, err)
		}
	}
}
