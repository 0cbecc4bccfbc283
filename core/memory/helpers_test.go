package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// newMem returns a Memory over a fresh memstore.
func newMem(t *testing.T, opts *Options) (*Memory, *store.Store) {
	t.Helper()
	s := store.New(newMemDriver(t), nil)
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

func content(t *testing.T, s *store.Store, path string) string {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<20)
	if errors.Is(err, store.ErrNotFound) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.Content
}

func put(t *testing.T, s *store.Store, path, text string) {
	t.Helper()
	expected := ""
	if f, err := s.Read(t.Context(), path, 1); err == nil {
		expected = f.Version
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: text, Expected: expected}); err != nil {
		t.Fatal(err)
	}
}

// testDriver wraps a driver's nine primitives (optional interfaces hidden)
// to count calls, inject conflicts or failures, and rewrite listings.
type testDriver struct {
	driver.Driver
	mu        sync.Mutex
	conflicts int   // next conditional writes to refuse with ErrPrecondition
	failRead  error // returned by GetFile and ListFiles
	escape    bool  // GetFile and mutations return ErrPathEscape
	gets      int
	lists     []int // ListFiles limits
	extraList []string
}

func newTestDriver() *testDriver { return &testDriver{Driver: mustMemDriver()} }

func (d *testDriver) take() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conflicts > 0 {
		d.conflicts--
		return true
	}
	return false
}

func (d *testDriver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	d.mu.Lock()
	d.gets++
	fail, esc := d.failRead, d.escape
	d.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case esc:
		return nil, driver.ErrPathEscape
	}
	return d.Driver.GetFile(ctx, path)
}

func (d *testDriver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	d.mu.Lock()
	d.lists = append(d.lists, p.Limit)
	fail, extra := d.failRead, d.extraList
	d.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	es, err := d.Driver.ListFiles(ctx, p)
	for _, x := range extra {
		es = append([]driver.Entry{{Path: x}}, es...)
	}
	return es, err
}

func (d *testDriver) CreateFile(ctx context.Context, f driver.File) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.CreateFile(ctx, f)
}

func (d *testDriver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.ReplaceFile(ctx, f, expected)
}

func (d *testDriver) DeleteFile(ctx context.Context, path, expected string) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.DeleteFile(ctx, path, expected)
}

func (d *testDriver) counts() (gets, lists int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gets, len(d.lists)
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
