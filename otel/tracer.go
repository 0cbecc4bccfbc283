package otel

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/memory"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of notebook spans (GenAI memory conventions, development
// status; the Go semconv packages no longer carry them).
const (
	// KeyGenAIOperation is the GenAI operation: upsert_memory,
	// delete_memory or search_memory.
	KeyGenAIOperation = attribute.Key("gen_ai.operation.name")
	// KeyMemoryStoreID is Options.StoreID.
	KeyMemoryStoreID = attribute.Key("gen_ai.memory.store.id")
	// KeyRecordCount is the number of matches of a search.
	KeyRecordCount = attribute.Key("gen_ai.memory.record.count")
	// KeyNotebookSpan is the notebook's own name for the span
	// (memory.write, memory.inject, …), which tells apart the calls that
	// share a GenAI operation.
	KeyNotebookSpan = attribute.Key("agentmem.memory.span")
)

// The GenAI operation of each notebook span: write_memory creates a file
// or changes one (upsert_memory); read_memory, search_memory and the
// per-request injection retrieve memory (search_memory).
var genAIOperations = map[string]string{
	"memory.write":  "upsert_memory",
	"memory.delete": "delete_memory",
	"memory.read":   "search_memory",
	"memory.search": "search_memory",
	"memory.inject": "search_memory",
}

// tracer bridges memory.Tracer to OpenTelemetry.
type tracer struct {
	in *instruments
}

// NewTracer returns a memory.Tracer (for memory.Options.Tracer) that makes
// one INTERNAL span per notebook call, named after its GenAI operation
// (upsert_memory for write_memory, delete_memory, search_memory for
// read_memory, search_memory and the injection), with
// gen_ai.operation.name, gen_ai.memory.store.id (Options.StoreID, when
// set), agentmem.memory.span (the notebook's name for the call), the
// notebook's content-free memory.* attributes, gen_ai.memory.record.count
// for searches, and on failure error.type (the notebook's
// memory.exception_type: Conflict, ToolError, BackendError, …) with an
// Error status. Tool calls that were replays or ended in a conflict are
// counted ([MetricReplays], [MetricConflicts]).
func NewTracer(opts *Options) memory.Tracer {
	return &tracer{in: newInstruments(opts)}
}

// Start implements memory.Tracer.
func (t *tracer) Start(ctx context.Context, name string) (context.Context, memory.Span) {
	op, ok := genAIOperations[name]
	if !ok {
		op = name
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, KeyGenAIOperation.String(op), KeyNotebookSpan.String(name))
	if id := t.in.opts.StoreID; id != "" {
		attrs = append(attrs, KeyMemoryStoreID.String(id))
	}
	ctx, sp := t.in.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, &span{ctx: ctx, sp: sp, in: t.in, op: op}
}

// span is one notebook span.
type span struct {
	ctx context.Context
	sp  trace.Span
	in  *instruments
	op  string
}

// SetAttributes implements memory.Span: it records the notebook's
// attributes and derives the GenAI ones and the counters from them.
func (s *span) SetAttributes(attrs ...memory.Attribute) {
	kvs := make([]attribute.KeyValue, 0, len(attrs)+2)
	for _, a := range attrs {
		kvs = append(kvs, keyValue(a))
		switch a.Key {
		case "memory.exception_type":
			kind := fmt.Sprint(a.Value)
			kvs = append(kvs, KeyErrorType.String(kind))
			s.sp.SetStatus(codes.Error, kind)
			if kind == "Conflict" || kind == "OperationConflict" {
				s.count(s.in.conflicts)
			}
		case "memory.replayed":
			if a.Value == true {
				s.count(s.in.replays)
			}
		case "memory.matches":
			if s.op == "search_memory" {
				kvs = append(kvs, keyValue(memory.Attribute{Key: string(KeyRecordCount), Value: a.Value}))
			}
		}
	}
	s.sp.SetAttributes(kvs...)
}

func (s *span) count(c metric.Int64Counter) {
	c.Add(s.ctx, 1, metric.WithAttributes(KeyGenAIOperation.String(s.op)))
}

// End implements memory.Span.
func (s *span) End() { s.sp.End() }

// keyValue converts a notebook attribute (string, int, bool or float64).
func keyValue(a memory.Attribute) attribute.KeyValue {
	k := attribute.Key(a.Key)
	switch v := a.Value.(type) {
	case string:
		return k.String(v)
	case int:
		return k.Int(v)
	case int64:
		return k.Int64(v)
	case bool:
		return k.Bool(v)
	case float64:
		return k.Float64(v)
	default:
		return k.String(fmt.Sprint(v))
	}
}

// rooting is a tracer whose spans in agentmem's background work (an
// indexing job, a queued append, a triggered consolidation, a poll: a
// context with a background.Origin) do not hang under the request that
// asked for the work, which has often ended: the work's first span is a
// new root, linked to the request's span. Spans the work starts under
// that root are its children as usual.
type rooting struct{ trace.Tracer }

// Start implements trace.Tracer.
func (t rooting) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if origin := background.Origin(ctx); origin != nil {
		link := trace.SpanContextFromContext(origin)
		// The span in ctx is the work's own unless it is the request's,
		// carried with the request's values (background.Group.Detach).
		if sc := trace.SpanContextFromContext(ctx); !sc.IsValid() || sc.Equal(link) {
			opts = append(opts[:len(opts):len(opts)], trace.WithNewRoot())
			if link.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
			}
		}
	}
	return t.Tracer.Start(ctx, name, opts...)
}
