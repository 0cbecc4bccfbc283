package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// mcpRecorder returns options recording spans, and the recorder.
func mcpRecorder(t *testing.T) (*amotel.Options, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &amotel.Options{TracerProvider: tp}, rec
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

type jsonrpcError struct{ code string }

func (e jsonrpcError) Error() string     { return "invalid params: unknown tool \"secret.md\"" }
func (e jsonrpcError) ErrorType() string { return e.code }

type toolError struct{}

func (toolError) Error() string     { return "tool error" }
func (toolError) ErrorType() string { return "tool_error" }

const (
	remoteTrace  = "0af7651916cd43dd8448eb211c80319c"
	remoteParent = "b7ad6b7169203331"
)

func TestMCPObserverSpanPerRequestParentedFromMeta(t *testing.T) {
	opts, rec := mcpRecorder(t)
	observe := amotel.MCPObserver(opts)
	d, tracer := amotel.Instrument(newMemDriver(t), opts)
	mem, err := memory.New(store.New(d, nil), &memory.Options{Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}

	// A tools/call carrying W3C trace context in _meta; the notebook call
	// runs in the context the observer returns.
	ctx, end := observe(t.Context(), amotel.MCPRequest{
		Method: "tools/call", ToolName: "write_memory", SessionID: "sess-1", RequestID: "7",
		ProtocolVersion: "2025-06-18",
		Meta: map[string]any{
			"traceparent": "00-" + remoteTrace + "-" + remoteParent + "-01", "tracestate": "vendor=1",
			"agentmem/idempotency-key": "job-1",
		},
	})
	args, _ := json.Marshal(map[string]any{"content": "- secret content", "file": "notes.md", "old_text": nil})
	if _, err := mem.Call(ctx, memory.Invocation{Namespace: "alice", RunID: "r", ToolCallID: "c"}, "write_memory", args); err != nil {
		t.Fatal(err)
	}
	end(nil)

	spans := rec.Ended()
	var server sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindServer {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no SERVER span among %d", len(spans))
	}
	if server.Name() != "tools/call write_memory" {
		t.Errorf("span name %q", server.Name())
	}
	want := map[attribute.Key]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "write_memory", "gen_ai.operation.name": "execute_tool",
		"mcp.session.id": "sess-1", "jsonrpc.request.id": "7", "mcp.protocol.version": "2025-06-18",
	}
	got := spanAttrs(server)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want exactly %v", got, want)
	}
	if server.Status().Code == codes.Error {
		t.Errorf("status %v", server.Status())
	}
	if p := server.Parent(); p.TraceID().String() != remoteTrace || p.SpanID().String() != remoteParent || !p.IsRemote() {
		t.Errorf("parent %v, want the _meta trace context", p)
	}
	if ts := server.SpanContext().TraceState().Get("vendor"); ts != "1" {
		t.Errorf("tracestate vendor = %q", ts)
	}
	// The notebook's and the driver's spans are descendants of the MCP
	// span, in its trace.
	ids := map[trace.SpanID]bool{server.SpanContext().SpanID(): true}
	for changed := true; changed; {
		changed = false
		for _, s := range spans {
			if !ids[s.SpanContext().SpanID()] && ids[s.Parent().SpanID()] {
				ids[s.SpanContext().SpanID()], changed = true, true
			}
		}
	}
	if len(ids) != len(spans) || len(spans) < 3 {
		t.Errorf("%d of %d spans descend from the MCP span", len(ids), len(spans))
	}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); strings.Contains(v, "secret") || strings.Contains(v, "alice") || strings.Contains(v, "job-1") {
				t.Errorf("span %s carries %s=%q (content, user or idempotency key)", s.Name(), kv.Key, v)
			}
		}
	}
}

func TestMCPObserverErrorsAndParents(t *testing.T) {
	opts, rec := mcpRecorder(t)
	observe := amotel.MCPObserver(opts)

	// A local span (say, an HTTP server span) parents a request without
	// _meta, and is linked from one with _meta.
	local, sp := sdktrace.NewTracerProvider().Tracer("test").Start(t.Context(), "POST /")
	defer sp.End()
	cases := []struct {
		req        amotel.MCPRequest
		err        error
		name, kind string
		status     string
	}{
		{amotel.MCPRequest{Method: "tools/call", ToolName: "read_memory", RequestID: "1"}, toolError{}, "tools/call read_memory", "tool_error", ""},
		{amotel.MCPRequest{Method: "tools/call", ToolName: "secret.md", RequestID: "abc"}, jsonrpcError{"-32602"}, "tools/call secret.md", "-32602", "-32602"},
		{amotel.MCPRequest{Method: "resources/read", RequestID: "2", Meta: map[string]any{"traceparent": "00-" + remoteTrace + "-" + remoteParent + "-01"}}, errors.New("backend down: alice"), "resources/read", "_OTHER", ""},
		{amotel.MCPRequest{Method: "prompts/get", PromptName: "memory", RequestID: "3", Meta: map[string]any{"traceparent": "garbage"}}, nil, "prompts/get memory", "", ""},
		{amotel.MCPRequest{Method: "notifications/initialized"}, nil, "notifications/initialized", "", ""},
	}
	for _, c := range cases {
		_, end := observe(local, c.req)
		end(c.err)
	}
	spans := rec.Ended()
	if len(spans) != len(cases) {
		t.Fatalf("%d spans, want %d", len(spans), len(cases))
	}
	for i, c := range cases {
		s, a := spans[i], spanAttrs(spans[i])
		if s.Name() != c.name || a["error.type"] != c.kind || a["rpc.response.status_code"] != c.status {
			t.Errorf("%s: span %q, error.type %q, rpc.response.status_code %q; want %q, %q, %q",
				c.req.Method, s.Name(), a["error.type"], a["rpc.response.status_code"], c.name, c.kind, c.status)
		}
		if (c.err != nil) != (s.Status().Code == codes.Error) || strings.Contains(s.Status().Description, "alice") {
			t.Errorf("%s: status %v for error %v", c.req.Method, s.Status(), c.err)
		}
		if _, ok := a["jsonrpc.request.id"]; ok != (c.req.RequestID != "") {
			t.Errorf("%s: jsonrpc.request.id %q", c.req.Method, a["jsonrpc.request.id"])
		}
		if _, ok := a["mcp.session.id"]; ok {
			t.Errorf("%s: a session id without a session", c.req.Method)
		}
		_, hasOp := a["gen_ai.operation.name"]
		if hasOp != (c.req.Method == "tools/call") {
			t.Errorf("%s: gen_ai.operation.name %q", c.req.Method, a["gen_ai.operation.name"])
		}
	}
	if p := spans[2].Parent(); p.TraceID().String() != remoteTrace || len(spans[2].Links()) != 1 ||
		spans[2].Links()[0].SpanContext.SpanID() != sp.SpanContext().SpanID() {
		t.Errorf("with _meta: parent %v, links %v; want the remote parent and a link to the local span", p, spans[2].Links())
	}
	for _, i := range []int{0, 3, 4} { // no or unparsable _meta: the local span
		if spans[i].Parent().SpanID() != sp.SpanContext().SpanID() || len(spans[i].Links()) != 0 {
			t.Errorf("%s: parent %v, want the local span", spans[i].Name(), spans[i].Parent())
		}
	}
}
