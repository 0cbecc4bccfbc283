package e2e_test

import (
	"context"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
	amotel "github.com/agentmem/agentmem/otel"
)

// TestMCPSpans plugs otel.MCPObserver into mcp.Options.Observe (the two
// modules share the request type without otel importing the MCP SDK): a
// tools/call with W3C trace context in _meta makes one SERVER span in the
// client's trace, and the notebook's and the driver's spans are its
// descendants.
func TestMCPSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := &amotel.Options{TracerProvider: tp}
	d, tracer := amotel.Instrument(newMemDriver(t), opts)
	mem, err := memory.New(store.New(d, nil), &memory.Options{Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, &agentmemmcp.Options{
		Namespace: agentmemmcp.FixedUser("ana"),
		Observe:   amotel.MCPObserver(opts),
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{
		Name:      "write_memory",
		Arguments: map[string]any{"content": "- likes tea", "file": nil, "old_text": nil},
		Meta:      mcpsdk.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"},
	})
	if err != nil || res.IsError {
		t.Fatalf("write_memory: %v %v", res, err)
	}
	var call sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call write_memory" {
			call = s
		}
	}
	if call == nil || call.SpanKind() != trace.SpanKindServer || call.SpanContext().TraceID().String() != traceID {
		t.Fatalf("no SERVER span tools/call write_memory in the client's trace: %v", call)
	}
	descendants := map[trace.SpanID]bool{call.SpanContext().SpanID(): true}
	for changed := true; changed; {
		changed = false
		for _, s := range rec.Ended() {
			if !descendants[s.SpanContext().SpanID()] && descendants[s.Parent().SpanID()] {
				descendants[s.SpanContext().SpanID()], changed = true, true
			}
		}
	}
	var notebook, backend int
	for _, s := range rec.Ended() {
		if !descendants[s.SpanContext().SpanID()] {
			continue
		}
		switch s.SpanKind() {
		case trace.SpanKindClient:
			backend++
		case trace.SpanKindInternal:
			notebook++
		}
	}
	if notebook == 0 || backend == 0 {
		t.Fatalf("under the MCP span: %d notebook and %d backend spans, want both", notebook, backend)
	}
}
