package mcp_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

type observed struct {
	info agentmemmcp.RequestInfo
	err  error
	done bool
}

// recorder is an Options.Observe that records each message and marks the
// context it returns.
type recorder struct {
	mu  sync.Mutex
	got []*observed
}

type markKey struct{}

func (r *recorder) observe(ctx context.Context, info agentmemmcp.RequestInfo) (context.Context, func(error)) {
	o := &observed{info: info}
	r.mu.Lock()
	r.got = append(r.got, o)
	r.mu.Unlock()
	return context.WithValue(ctx, markKey{}, info.Method), func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		o.err, o.done = err, true
	}
}

func (r *recorder) find(t *testing.T, method, tool string) []*observed {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*observed
	for _, o := range r.got {
		if o.info.Method == method && o.info.ToolName == tool {
			out = append(out, o)
		}
	}
	return out
}

func TestObserveSeesEachRequestAndItsOutcome(t *testing.T) {
	rec := &recorder{}
	var nsCtx []any
	var mu sync.Mutex
	srv := newServer(t, newMemory(t), &agentmemmcp.Options{
		Observe: rec.observe,
		Namespace: func(ctx context.Context, req mcpsdk.Request) (string, error) {
			mu.Lock()
			nsCtx = append(nsCtx, ctx.Value(markKey{}))
			mu.Unlock()
			return "alice", nil
		},
	})
	hs := serveHTTP(t, srv, "alice")
	cs := connectHTTP(t, hs, "alice")
	trace := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	write(t, cs, "MEMORY.md", "- a")
	call(t, cs, "read_memory", map[string]any{"file": "nothing.md"}, mcpsdk.Meta{"traceparent": trace, "tracestate": "k=v"})
	if _, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("unknown tool: no error")
	}
	if _, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: agentmemmcp.PromptName}); err != nil {
		t.Fatal(err)
	}

	writes := rec.find(t, "tools/call", "write_memory")
	if len(writes) != 1 || !writes[0].done || writes[0].err != nil {
		t.Fatalf("write_memory observed %+v", writes)
	}
	w := writes[0].info
	if w.SessionID == "" || w.SessionID != cs.ID() || w.RequestID == "" || w.ProtocolVersion == "" {
		t.Fatalf("write_memory info %+v (client session %q)", w, cs.ID())
	}
	if w.Meta != nil {
		t.Fatalf("write_memory sent no _meta, observed %v (the server's own keys must not show)", w.Meta)
	}
	reads := rec.find(t, "tools/call", "read_memory")
	if len(reads) != 1 || !errors.Is(reads[0].err, agentmemmcp.ErrToolResult) {
		t.Fatalf("read_memory of a missing file observed %+v, want ErrToolResult", reads)
	}
	if m := reads[0].info.Meta; len(m) != 2 || m["traceparent"] != trace || m["tracestate"] != "k=v" {
		t.Fatalf("read_memory meta %v", m)
	}
	if reads[0].info.RequestID == w.RequestID {
		t.Fatalf("two requests share the id %q", w.RequestID)
	}
	unknown := rec.find(t, "tools/call", "no_such_tool")
	var typed interface{ ErrorType() string }
	if len(unknown) != 1 || !errors.As(unknown[0].err, &typed) || typed.ErrorType() != "-32602" {
		t.Fatalf("unknown tool observed %+v, want a JSON-RPC error typed -32602", unknown)
	}
	prompts := rec.find(t, "prompts/get", "")
	if len(prompts) != 1 || prompts[0].info.PromptName != agentmemmcp.PromptName {
		t.Fatalf("prompts/get observed %+v", prompts)
	}
	if init := rec.find(t, "initialize", ""); len(init) != 1 || init[0].info.RequestID == "" {
		t.Fatalf("initialize observed %+v", init)
	}
	if n := rec.find(t, "notifications/initialized", ""); len(n) != 1 || n[0].info.RequestID != "" {
		t.Fatalf("notifications/initialized observed %+v", n)
	}
	// The tool handlers ran in the context Observe returned.
	mu.Lock()
	defer mu.Unlock()
	for _, v := range nsCtx {
		if v == nil {
			t.Fatalf("a request was served outside the observed context: %v", nsCtx)
		}
	}
}

func TestObserveOverInMemoryTransport(t *testing.T) {
	rec := &recorder{}
	cs := connect(t, newServer(t, newMemory(t), &agentmemmcp.Options{Observe: rec.observe, Namespace: agentmemmcp.FixedUser("u")}), nil)
	write(t, cs, "MEMORY.md", "- a")
	w := rec.find(t, "tools/call", "write_memory")
	if len(w) != 1 || w[0].info.RequestID == "" || w[0].info.SessionID != "" || w[0].err != nil {
		t.Fatalf("observed %+v", w)
	}
}
