package pruned

import (
	"context"
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"
)

// TestTriggerRunsInTheBackground: a trigger consolidates a namespace after
// Every pruned entries, on its own goroutine: Pruned returns while the
// model is still answering.
func TestTriggerRunsInTheBackground(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText})
	release, waited := make(chan struct{}), 0
	model := ModelFunc(func(ctx context.Context, req ModelRequest) (ModelResponse, error) {
		<-release
		return ModelResponse{Text: theAnswer, Model: "m"}, nil
	})
	tr, err := NewTrigger(m, TriggerOptions{Model: model, Every: 2, Wait: func(context.Context) error { waited++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	tr.Pruned(t.Context(), "u", 1)
	if err := tr.Flush(t.Context()); err != nil || waited != 0 {
		t.Fatalf("a run started below Every: %v, %d", err, waited)
	}
	tr.Pruned(t.Context(), "u", 1) // due: the run starts and waits for the model
	tr.Pruned(t.Context(), "u", 5) // never blocks while it runs
	close(release)
	if err := tr.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, "u/main/MEMORY.md"); got != wantMemory || waited < 1 {
		t.Fatalf("MEMORY.md = %q (waited %d)", got, waited)
	}
	tr.Pruned(t.Context(), "u", 100) // after Close: ignored
	if err := tr.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTrigger(m, TriggerOptions{}); !errors.Is(err, ErrNilModel) {
		t.Fatal(err)
	}
}

// TestTriggerReportsFailures: a failed run goes to OnError.
func TestTriggerReportsFailures(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/pruned.md": prunedText})
	boom := errors.New("model down")
	var got error
	tr, err := NewTrigger(m, TriggerOptions{Every: 1, OnError: func(_ context.Context, err error) { got = err },
		Model: ModelFunc(func(context.Context, ModelRequest) (ModelResponse, error) { return ModelResponse{}, boom })})
	if err != nil {
		t.Fatal(err)
	}
	tr.Pruned(t.Context(), "u", 1)
	if err := tr.Close(t.Context()); err != nil || !errors.Is(got, boom) {
		t.Fatalf("OnError got %v (%v)", got, err)
	}
}

// TestTriggerPrunedOnce: an entry reported again (a history window prunes
// the same oldest entries on every request) counts once towards Every.
func TestTriggerPrunedOnce(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText})
	asks := 0
	model := ModelFunc(func(context.Context, ModelRequest) (ModelResponse, error) {
		asks++
		return ModelResponse{Text: theAnswer, Model: "m"}, nil
	})
	tr, err := NewTrigger(m, TriggerOptions{Model: model, Every: 3})
	if err != nil {
		t.Fatal(err)
	}
	tr.PrunedOnce(t.Context(), "u", "a", "b")
	tr.PrunedOnce(t.Context(), "u", "a", "b")
	tr.PrunedOnce(t.Context(), "v", "c") // another namespace counts apart
	if err := tr.Flush(t.Context()); err != nil || asks != 0 {
		t.Fatalf("a run started below Every: %v, %d asks", err, asks)
	}
	tr.PrunedOnce(t.Context(), "u", "a", "b", "c") // one new: due
	if err := tr.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, "u/main/MEMORY.md"); got != wantMemory || asks != 1 {
		t.Fatalf("MEMORY.md = %q after %d asks", got, asks)
	}
}
