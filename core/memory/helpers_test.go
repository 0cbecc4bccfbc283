package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"

	"github.com/agentmem/agentmem/core/store"
)

// newMem returns a Memory over a fresh memstore.
func newMem(t *testing.T, opts *Options) (*Memory, *store.Store) {
	t.Helper()
	s := store.New(memtest.NewDriver(t), nil)
	t.Cleanup(func() { _ = s.Close() })
	return mustNew(t, s, opts), s
}

func mustNew(t *testing.T, s *store.Store, opts *Options) *Memory {
	t.Helper()
	m, err := New(s, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

var callSeq atomic.Int64

// inv returns an invocation with fresh run and tool-call ids.
func inv(ns string) Invocation {
	n := callSeq.Add(1)
	return Invocation{Namespace: ns, RunID: fmt.Sprintf("run-%d", n), ToolCallID: fmt.Sprintf("call-%d", n)}
}

// call runs a tool and fails the test on a Go error.
func call(t *testing.T, m *Memory, in Invocation, tool string, args any) any {
	t.Helper()
	res, err := m.Call(t.Context(), in, tool, mustJSON(t, args))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	if s, ok := v.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantToolErr(t *testing.T, res any, fragment string) {
	t.Helper()
	te, ok := res.(*ToolError)
	if !ok {
		t.Fatalf("result %#v, want a ToolError containing %q", res, fragment)
	}
	if !strings.Contains(te.Message, fragment) {
		t.Fatalf("tool error %q does not contain %q", te.Message, fragment)
	}
}

func wantWrite(t *testing.T, res any) *WriteResult {
	t.Helper()
	w, ok := res.(*WriteResult)
	if !ok {
		t.Fatalf("result %#v, want a WriteResult", res)
	}
	return w
}

// recTracer records spans.
type recTracer struct {
	mu    sync.Mutex
	spans []*recSpan
}

type recSpan struct {
	name  string
	attrs map[string]any
	ended bool
}

func (r *recTracer) Start(ctx context.Context, name string) (context.Context, Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &recSpan{name: name, attrs: map[string]any{}}
	r.spans = append(r.spans, s)
	return ctx, s
}

func (s *recSpan) SetAttributes(attrs ...Attribute) {
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}

func (s *recSpan) End() { s.ended = true }

func (r *recTracer) named(name string) []*recSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*recSpan
	for _, s := range r.spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}
