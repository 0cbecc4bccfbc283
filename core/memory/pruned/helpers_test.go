package pruned

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

// newMem returns a Memory over a fresh memstore.
func newMem(t *testing.T, opts *memory.Options) (*memory.Memory, *store.Store) {
	t.Helper()
	s := store.New(memtest.NewDriver(t), nil)
	t.Cleanup(func() { _ = s.Close() })
	return mustNew(t, s, opts), s
}

func mustNew(t *testing.T, s *store.Store, opts *memory.Options) *memory.Memory {
	t.Helper()
	m, err := memory.New(s, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

var callSeq atomic.Int64

// call runs a tool of m for namespace ns, with fresh run and tool-call
// ids, and fails the test on a Go error.
func call(t *testing.T, m *memory.Memory, ns, tool string, args any) any {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	n := callSeq.Add(1)
	in := memory.Invocation{Namespace: ns, RunID: fmt.Sprintf("run-%d", n), ToolCallID: fmt.Sprintf("call-%d", n)}
	res, err := m.Call(t.Context(), in, tool, b)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// ctxKey carries a test value through a context.
type ctxKey struct{}

// mustQueue returns NewAppendQueue(m, opts), failing t on an error.
func mustQueue(t *testing.T, m *memory.Memory, opts *QueueOptions) *AppendQueue {
	t.Helper()
	q, err := NewAppendQueue(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
