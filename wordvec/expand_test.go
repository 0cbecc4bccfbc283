package wordvec

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/search"
)

var (
	_ search.QueryExpander = (*Embedder)(nil)
	_ search.QueryExpander = (*lazy)(nil)
)

// TestExpandQuery: a query word gains its near words (auto for
// automobile, purchase for buy), function words gain none, and the answer is the same each
// time.
func TestExpandQuery(t *testing.T) {
	e, err := New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ExpandQuery(t.Context(), "Which automobile did we buy?")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got, func(w string) bool { return w == "car" || w == "auto" || w == "motor" }) ||
		!slices.Contains(got, "purchase") {
		t.Errorf("ExpandQuery(which automobile did we buy) = %v: want car, auto or motor, and purchase among them", got)
	}
	if len(got) > 2*expandPerWord {
		t.Errorf("ExpandQuery gave %d words for two content words: %v", len(got), got)
	}
	if none, _ := e.ExpandQuery(t.Context(), "what did the of and"); len(none) != 0 {
		t.Errorf("function words expanded to %v", none)
	}
	again, _ := e.ExpandQuery(t.Context(), "Which automobile did we buy?")
	if !slices.Equal(got, again) {
		t.Errorf("not deterministic: %v then %v", got, again)
	}
	var nilCtx context.Context
	if _, err := e.ExpandQuery(nilCtx, "car"); err == nil {
		t.Error("a nil context: no error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.ExpandQuery(ctx, "car"); err == nil {
		t.Error("a done context: no error")
	}
}

// BenchmarkExpandQuery reports a four-word query's expansion: cold-ns is
// the first time each word is seen (a scan of the vocabulary per word),
// ns/op the cached case.
func BenchmarkExpandQuery(b *testing.B) {
	e, err := New(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	const q = "where does my sister volunteer"
	e.t.exp.neighbours.Clear()
	began := time.Now()
	if _, err := e.ExpandQuery(b.Context(), q); err != nil {
		b.Fatal(err)
	}
	cold := time.Since(began)
	b.ResetTimer()
	for range b.N {
		if _, err := e.ExpandQuery(b.Context(), q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cold.Nanoseconds()), "cold-ns")
}
