package otel_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// flat is an embedder for tests that gives every text the same vector:
// the indexer's spans are what matters here, not its ranking.
type flat struct{}

func (flat) Model() string { return "flat" }
func (flat) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// TestBackgroundSpansAreNewRoots: the work a request asks for and that
// runs after it (the indexing of the file it wrote, an append it queued)
// makes no span under the request's: the work's first span is a new root
// linked to a span of the request's trace, and the work's driver calls
// are in the work's trace. Before, every indexing call was a child of the
// first write's store span, and a queued append's spans children of the
// request that queued it.
func TestBackgroundSpansAreNewRoots(t *testing.T) {
	h := newHarness(t, amotel.Options{RecordPaths: true})
	s, tr := amotel.NewStore(mustMemDriver(), h.opts, &store.Options{Embedder: flat{}})
	mem, err := memory.New(s, &memory.Options{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	q, err := pruned.NewAppendQueue(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, req := h.opts.TracerProvider.Tracer("test").Start(t.Context(), "request")
	in := memory.Invocation{Namespace: "u", RunID: "run", ToolCallID: "call"}
	if _, err := mem.Call(ctx, in, "write_memory", []byte(`{"content":"Likes green tea."}`)); err != nil {
		t.Fatal(err)
	}
	if err := q.Add(ctx, "u/main/pruned.md", "- an old turn", "op-1"); err != nil {
		t.Fatal(err)
	}
	req.End()
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	spans := h.spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		byID[sp.SpanContext().SpanID()] = sp
	}
	root := func(sp sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
		for sp.Parent().IsValid() {
			p, ok := byID[sp.Parent().SpanID()]
			if !ok {
				t.Fatalf("span %s: parent not recorded", sp.Name())
			}
			sp = p
		}
		return sp
	}
	reqTrace := req.SpanContext().TraceID()
	// The traces that descend from the request by links: its own, then
	// those of the work it asked for, then of the work that work asked for
	// (the indexing of the file a queued append wrote).
	linked := map[trace.TraceID]bool{reqTrace: true}
	for grew := true; grew; {
		grew = false
		for _, sp := range spans {
			for _, l := range sp.Links() {
				if linked[l.SpanContext.TraceID()] && !linked[sp.SpanContext().TraceID()] {
					linked[sp.SpanContext().TraceID()], grew = true, true
				}
			}
		}
	}
	background := map[string]int{}
	for _, sp := range spans {
		path := attrs(sp)[amotel.KeyPath].AsString()
		if sp.Name() != "store.Index" && !search.IsIndexPath(path) && path != "u/main/pruned.md" {
			continue // the request's own work
		}
		if sp.SpanContext().TraceID() == reqTrace {
			t.Errorf("background span %s (%s) is in the request's trace, under %s", sp.Name(), path, byID[sp.Parent().SpanID()].Name())
			continue
		}
		r := root(sp)
		background[r.Name()]++
		if len(r.Links()) == 0 || !linked[r.SpanContext().TraceID()] {
			t.Errorf("background root %s of %s links nothing of the request's: %v", r.Name(), sp.Name(), r.Links())
		}
	}
	if background["store.Index"] == 0 || background["store.Write"] == 0 {
		t.Errorf("background work by root span: %v, want store.Index (the indexer) and store.Write (the queued append)", background)
	}
}
