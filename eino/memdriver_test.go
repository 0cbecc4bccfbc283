package eino_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem/core/memstore"
)

// newMemDriver returns a new in-memory driver, failing tb if New fails.
func newMemDriver(tb testing.TB) *memstore.Driver {
	tb.Helper()
	d, err := memstore.New(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
