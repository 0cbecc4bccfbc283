package otel_test

import (
	"context"
	"fmt"

	amotel "github.com/agentmem/agentmem/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// MCPObserver is given to mcp.Options.Observe (module
// github.com/agentmem/agentmem/mcp); the MCP server calls it for each
// request. Here it is called as the server would, for a tools/call whose
// client sent its trace context in _meta.
func ExampleMCPObserver() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	observe := amotel.MCPObserver(&amotel.Options{TracerProvider: tp})
	// srv, _ := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Observe: observe})

	ctx, end := observe(context.Background(), amotel.MCPRequest{
		Method: "tools/call", ToolName: "write_memory", RequestID: "7",
		Meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})
	_ = ctx // the tool call runs in ctx: the notebook's spans are children
	end(nil)

	s := rec.Ended()[0]
	fmt.Println(s.SpanKind(), s.Name(), s.SpanContext().TraceID())
	for _, kv := range s.Attributes() {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.Emit())
	}
	// Output:
	// server tools/call write_memory 4bf92f3577b34da6a3ce929d0e0e4736
	// mcp.method.name=tools/call
	// gen_ai.tool.name=write_memory
	// gen_ai.operation.name=execute_tool
	// jsonrpc.request.id=7
}
