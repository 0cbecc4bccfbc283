package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// printSpans prints each span's kind, name and parent's name, in the
// order they ended: timestamps and ids would make the output differ per
// run.
func printSpans(spans []sdktrace.ReadOnlySpan) {
	byID := map[trace.SpanID]string{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s.Name()
	}
	for _, s := range spans {
		parent := "-"
		if s.Parent().IsValid() {
			parent = byID[s.Parent().SpanID()]
		}
		fmt.Printf("%-8s %-28s parent: %s\n", s.SpanKind(), s.Name(), parent)
	}
}

// Instrument turns on spans and metrics for a store and its notebook: a
// tool call's span is the parent of the backend requests it makes (they
// end first, so they print first).
func Example() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(ctx) }()

	d, tracer := amotel.Instrument(memstore.New(), &amotel.Options{TracerProvider: tp, StoreID: "agent-memory"})
	mem, _ := memory.New(store.New(d, nil), &memory.Options{Tracer: tracer})
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-1"}
	_, _ = mem.Call(ctx, in, "write_memory", json.RawMessage(`{"content": "- lives in Hanoi", "file": null, "old_text": null}`))
	_, _ = mem.Call(ctx, in, "search_memory", json.RawMessage(`{"query": "hanoi"}`))
	printSpans(rec.Ended())
	// Output:
	// client   GetFile agentmem.memstore    parent: upsert_memory
	// client   GetFiles agentmem.memstore   parent: upsert_memory
	// client   ListFiles agentmem.memstore  parent: upsert_memory
	// client   Mutate agentmem.memstore     parent: upsert_memory
	// internal upsert_memory                parent: -
	// client   ReadScope agentmem.memstore  parent: search_memory
	// internal search_memory                parent: -
}

// With the stdout exporter every span prints as JSON (with timestamps and
// ids, so this example only compiles). In production, give Options (or
// the global providers) an OTLP exporter's providers instead.
func ExampleInstrument_stdout() {
	exp, err := stdouttrace.New(stdouttrace.WithPrettyPrint())
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	d, tracer := amotel.Instrument(memstore.New(), &amotel.Options{TracerProvider: tp})
	mem, _ := memory.New(store.New(d, nil), &memory.Options{Tracer: tracer})
	_, _ = mem.Snapshot(context.Background(), "kamal")
}
