package otel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"

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

// NewStore turns on spans and metrics for a store and its notebook: a
// tool call's span is the parent of the store operations it makes, each
// the parent of its backend requests (children end first, so they print
// first).
func Example() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(ctx) }()

	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, tracer := amotel.NewStore(d, &amotel.Options{TracerProvider: tp, StoreID: "agent-memory"}, nil)
	mem, _ := memory.New(s, &memory.Options{Tracer: tracer})
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-1"}
	_, _ = mem.Call(ctx, in, "search_memory", json.RawMessage(`{"query": "hanoi"}`))
	printSpans(rec.Ended())
	// Output:
	// client   GetFile agentmem.memstore    parent: store.Search
	// client   ReadScope agentmem.memstore  parent: store.Search
	// internal store.Search                 parent: search_memory
	// internal search_memory                parent: -
}

// Instrument alone instruments the backend requests and the notebook's
// tool calls, without store spans: a tool call's span is the parent of
// the backend requests it makes.
func ExampleInstrument() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(ctx) }()

	md, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	d, tracer := amotel.Instrument(md, &amotel.Options{TracerProvider: tp, StoreID: "agent-memory"})
	mem, _ := memory.New(store.New(d, nil), &memory.Options{Tracer: tracer})
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-1"}
	_, _ = mem.Call(ctx, in, "write_memory", json.RawMessage(`{"content": "- lives in Hanoi", "file": null, "old_text": null}`))
	_, _ = mem.Call(ctx, in, "search_memory", json.RawMessage(`{"query": "hanoi"}`))
	printSpans(rec.Ended())
	// Output:
	// client   GetFile agentmem.memstore    parent: upsert_memory
	// client   Mutate agentmem.memstore     parent: upsert_memory
	// internal upsert_memory                parent: -
	// client   GetFile agentmem.memstore    parent: search_memory
	// client   ReadScope agentmem.memstore  parent: search_memory
	// internal search_memory                parent: -
}

// exported is the part of a span, as the stdout exporter writes it, that
// printTree shows.
type exported struct {
	Name        string
	SpanContext struct{ SpanID string }
	Parent      struct{ SpanID string }
	SpanKind    trace.SpanKind
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
	Status struct{ Code, Description string }
}

// printTree reads the spans the stdout exporter wrote and prints them as
// a tree, each with its kind, its status when set, and a few attributes.
func printTree(out io.Reader) {
	var spans []exported
	for dec := json.NewDecoder(out); ; {
		var s exported
		if err := dec.Decode(&s); err != nil {
			break // io.EOF
		}
		spans = append(spans, s)
	}
	show := map[string]bool{"gen_ai.operation.name": true, "agentmem.store.outcome": true, "error.type": true}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range spans { // children in the order they ended
			if s.Parent.SpanID != parent {
				continue
			}
			line := strings.Repeat("  ", depth) + s.Name + " (" + s.SpanKind.String() + ")"
			if s.Status.Code != "Unset" {
				line += " " + s.Status.Code
			}
			for _, a := range s.Attributes {
				if show[a.Key] {
					line += fmt.Sprintf(" %s=%v", a.Key, a.Value.Value)
				}
			}
			fmt.Println(line)
			walk(s.SpanContext.SpanID, depth+1)
		}
	}
	walk("0000000000000000", 0)
}

// With the stdout exporter every span is written as JSON; here to a
// buffer, without timestamps, and printed back as a tree. In production,
// give Options (or the global providers) an OTLP exporter's providers
// instead.
func ExampleNewStore_stdout() {
	ctx := context.Background()
	var out bytes.Buffer
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&out), stdouttrace.WithoutTimestamps())
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()

	d, err := memstore.New(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, tracer := amotel.NewStore(d, &amotel.Options{TracerProvider: tp, StoreID: "agent-memory"}, nil)
	mem, _ := memory.New(s, &memory.Options{Tracer: tracer})
	in := memory.Invocation{Namespace: "kamal", RunID: "run-1", ToolCallID: "call-1"}
	_, _ = mem.Call(ctx, in, "write_memory", json.RawMessage(`{"content": "- lives in Hanoi", "file": null, "old_text": null}`))
	// A stale version: the store refuses it, and its span says so.
	_, _ = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "lost", Expected: "v-stale"})
	printTree(&out)
	// Output:
	// upsert_memory (internal) gen_ai.operation.name=upsert_memory
	//   store.Read (internal) gen_ai.operation.name=search_memory agentmem.store.outcome=not_found
	//     GetFile agentmem.memstore (client)
	//   store.Write (internal) gen_ai.operation.name=create_memory agentmem.store.outcome=ok
	//     Mutate agentmem.memstore (client)
	// store.Write (internal) Error gen_ai.operation.name=update_memory agentmem.store.outcome=conflict error.type=conflict
	//   Mutate agentmem.memstore (client) Error error.type=precondition_failed
}
