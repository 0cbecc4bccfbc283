package pruned

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

// writeWatch is a store Observer that keeps the context of each write
// (memory.Append included) and, when hang is set, blocks in it until that
// context is done, telling began and canceled.
type writeWatch struct {
	hang     bool
	began    chan struct{}
	canceled chan struct{}

	mu   sync.Mutex
	ctxs []context.Context
}

func newWriteWatch(hang bool) *writeWatch {
	return &writeWatch{hang: hang, began: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
}

func (w *writeWatch) ObserveOperation(ctx context.Context, op store.OperationInfo) (context.Context, func(store.OperationResult)) {
	if op.Op != store.OpWrite {
		return ctx, nil
	}
	w.mu.Lock()
	w.ctxs = append(w.ctxs, ctx)
	w.mu.Unlock()
	if w.hang {
		select {
		case w.began <- struct{}{}:
		default:
		}
		<-ctx.Done()
		select {
		case w.canceled <- struct{}{}:
		default:
		}
	}
	return ctx, nil
}
func (w *writeWatch) ObserveSettlement(context.Context, store.Settlement) {}

// within fails the test unless ch delivers within a generous bound (a
// hang, not a speed, is what it catches).
func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing after 10 s", what)
		var zero T
		return zero
	}
}

// TestAppendQueueCloseDeadlineCancelsTheAppend: Close bounded by a
// deadline returns with it and cancels the append in flight (before, the
// queue's worker kept appending, under a context nothing could cancel).
func TestAppendQueueCloseDeadlineCancelsTheAppend(t *testing.T) {
	w := newWriteWatch(true)
	s := store.New(memtest.NewDriver(t), &store.Options{Observer: w})
	m := mustNew(t, s, nil)
	q := mustQueue(t, m, nil)
	for i := range 10 {
		if err := q.Add(t.Context(), "u/main/pruned.md", "entry", fmt.Sprint("op", i)); err != nil {
			t.Fatal(err)
		}
	}
	within(t, "the first append", w.began)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- q.Close(ctx) }()
	if err := within(t, "Close", closed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want context.DeadlineExceeded", err)
	}
	within(t, "the cancellation of the append in flight", w.canceled)
	flushed := make(chan error, 1)
	go func() { flushed <- q.Flush(t.Context()) }()
	within(t, "Flush after Close", flushed)
}

// TestAppendQueueRunsUnderItsOwnContext: an append keeps the values of
// Add's context, not its cancellation, and links it (background.Origin).
func TestAppendQueueRunsUnderItsOwnContext(t *testing.T) {
	w := newWriteWatch(false)
	s := store.New(memtest.NewDriver(t), &store.Options{Observer: w})
	m := mustNew(t, s, nil)
	q := mustQueue(t, m, nil)
	add, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "tenant"))
	if err := q.Add(add, "u/main/pruned.md", "entry", "op"); err != nil {
		t.Fatal(err)
	}
	cancel() // the request ends; its append still lands
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, "u/main/pruned.md"); got != "entry\n" {
		t.Fatalf("pruned.md = %q", got)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ctxs) == 0 {
		t.Fatal("no write observed")
	}
	for _, ctx := range w.ctxs {
		if ctx.Value(ctxKey{}) != "tenant" || background.Origin(ctx) != add {
			t.Errorf("the append ran with value %v and origin %v, want Add's value and context", ctx.Value(ctxKey{}), background.Origin(ctx))
		}
	}
}

// TestTriggerCloseDeadlineCancelsTheRun: Close bounded by a deadline
// returns with it and cancels the consolidation in flight; the run kept
// the values of the report that made it due, not its cancellation.
func TestTriggerCloseDeadlineCancelsTheRun(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText})
	began, canceled := make(chan context.Context, 1), make(chan struct{}, 1)
	model := ModelFunc(func(ctx context.Context, req ModelRequest) (ModelResponse, error) {
		began <- ctx
		<-ctx.Done()
		canceled <- struct{}{}
		return ModelResponse{}, ctx.Err()
	})
	tr, err := NewTrigger(m, TriggerOptions{Model: model, Every: 1, OnError: func(context.Context, error) {}})
	if err != nil {
		t.Fatal(err)
	}
	report, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "tenant"))
	tr.Pruned(report, "u", 1)
	cancel()
	run := within(t, "the model call", began)
	if run.Err() != nil || run.Value(ctxKey{}) != "tenant" || background.Origin(run) != report {
		t.Errorf("the run's context: err %v, value %v, origin %v; want live, the report's value and context", run.Err(), run.Value(ctxKey{}), background.Origin(run))
	}
	ctx, stop := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer stop()
	closed := make(chan error, 1)
	go func() { closed <- tr.Close(ctx) }()
	if err := within(t, "Close", closed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want context.DeadlineExceeded", err)
	}
	within(t, "the cancellation of the run in flight", canceled)
}

// TestTriggerIntervalRunsWithEachNamespacesReport: a run the Interval
// makes due keeps the values of its own namespace's latest report (before,
// every run of the ticker had the first report's, whatever its namespace).
func TestTriggerIntervalRunsWithEachNamespacesReport(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText, "v/main/MEMORY.md": staleFact, "v/main/pruned.md": prunedText})
	var mu sync.Mutex
	var seen []any
	model := ModelFunc(func(ctx context.Context, req ModelRequest) (ModelResponse, error) {
		mu.Lock()
		seen = append(seen, ctx.Value(ctxKey{}))
		mu.Unlock()
		return ModelResponse{Text: theAnswer, Model: "m"}, nil
	})
	tr, err := NewTrigger(m, TriggerOptions{Model: model, Every: 1000, Interval: 10 * time.Millisecond, MaxRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr.Pruned(context.WithValue(t.Context(), ctxKey{}, "u's"), "u", 1)
	tr.Pruned(context.WithValue(t.Context(), ctxKey{}, "v's"), "v", 1)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) >= 2 })
	if err := tr.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := map[any]bool{}
	for _, v := range seen {
		got[v] = true
	}
	if !got["u's"] || !got["v's"] {
		t.Errorf("the runs saw %v, want each namespace's own report", seen)
	}
}
