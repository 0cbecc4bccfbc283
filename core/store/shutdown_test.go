package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	stdatomic "sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// hangingEmbedder blocks in Embed until its context is done (obeying it
// when obey is set, else until release is closed), telling began of each
// call.
type hangingEmbedder struct {
	obey    bool
	release chan struct{}
	began   chan struct{}
	calls   stdatomic.Int64
}

func newHangingEmbedder(t *testing.T, obey bool) *hangingEmbedder {
	e := &hangingEmbedder{obey: obey, release: make(chan struct{}), began: make(chan struct{}, 1)}
	t.Cleanup(func() { close(e.release) })
	return e
}

func (e *hangingEmbedder) Model() string { return "hanging" }
func (e *hangingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	select {
	case e.began <- struct{}{}:
	default:
	}
	if e.obey {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.release:
		}
	} else {
		<-e.release
	}
	return nil, errors.New("hanging: released")
}

// closeWatch is a driver that fails the test on any call after Close, and
// tells whether each call on an index row carried a request's value.
type closeWatch struct {
	driver.Driver
	t      *testing.T
	closed stdatomic.Bool

	mu        sync.Mutex
	indexCtxs []any // reqKey values seen by calls on index rows
}

type reqKey struct{}

func (w *closeWatch) call(ctx context.Context, p string) {
	if w.closed.Load() {
		w.t.Errorf("driver call on %s after Close", p)
	}
	if search.IsIndexPath(p) {
		w.mu.Lock()
		w.indexCtxs = append(w.indexCtxs, ctx.Value(reqKey{}))
		w.mu.Unlock()
	}
}

func (w *closeWatch) GetFile(ctx context.Context, p string) (*driver.File, error) {
	w.call(ctx, p)
	return w.Driver.GetFile(ctx, p)
}
func (w *closeWatch) CreateFile(ctx context.Context, f driver.File) error {
	w.call(ctx, f.Path)
	return w.Driver.CreateFile(ctx, f)
}
func (w *closeWatch) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	w.call(ctx, f.Path)
	return w.Driver.ReplaceFile(ctx, f, expected)
}
func (w *closeWatch) DeleteFile(ctx context.Context, p, expected string) error {
	w.call(ctx, p)
	return w.Driver.DeleteFile(ctx, p, expected)
}
func (w *closeWatch) Close() error {
	w.closed.Store(true)
	return nil
}

// returnsWithin fails the test unless f returns within a generous bound:
// it catches a hang, not a speed.
func returnsWithin(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s has not returned after 10 s", what)
		return nil
	}
}

// writeMany writes n files and waits until the indexer is embedding.
func writeMany(t *testing.T, s *store.Store, e *hangingEmbedder, n int) {
	t.Helper()
	for i := range n {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: fmt.Sprintf("u/main/f%03d.md", i), Content: "Likes green tea.\n"}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-e.began:
	case <-time.After(10 * time.Second):
		t.Fatal("the indexer did not start embedding")
	}
}

// TestShutdownDeadlineWithHangingEmbedder: with an embedder that blocks
// until its context is done and 100 writes queued, Shutdown returns by its
// deadline with context.DeadlineExceeded in the chain, and the driver is
// called no more after its Close.
func TestShutdownDeadlineWithHangingEmbedder(t *testing.T) {
	e := newHangingEmbedder(t, true)
	w := &closeWatch{Driver: newMemDriver(t), t: t}
	s := store.New(w, &store.Options{Embedder: e})
	writeMany(t, s, e, 100)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := returnsWithin(t, "Shutdown", func() error { return s.Shutdown(ctx) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want context.DeadlineExceeded in the chain", err)
	}
	if !w.closed.Load() {
		t.Error("Shutdown did not close the driver")
	}
	if again := s.Close(); again != err {
		t.Errorf("Close after Shutdown = %v, want the first result %v", again, err)
	}
	if n := e.calls.Load(); n > 2 {
		t.Errorf("the embedder was called %d times after the deadline cut the queue", n)
	}
}

// TestCloseBoundedWithEmbedderIgnoringItsContext: Close returns (by
// CloseTimeout, shortened here) even when the embedder ignores its
// context and never answers.
func TestCloseBoundedWithEmbedderIgnoringItsContext(t *testing.T) {
	e := newHangingEmbedder(t, false)
	w := &closeWatch{Driver: newMemDriver(t), t: t}
	s := store.New(w, &store.Options{Embedder: e})
	store.SetCloseTimeout(s, 50*time.Millisecond)
	writeMany(t, s, e, 10)
	err := returnsWithin(t, "Close", s.Close)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want context.DeadlineExceeded in the chain", err)
	}
	if !w.closed.Load() {
		t.Error("Close did not close the driver")
	}
	if err := s.WaitIndexed(t.Context()); err != nil {
		t.Errorf("WaitIndexed after Close = %v, want nil at once", err)
	}
}

// TestShutdownDrainsTheQueue: with time to spare, Shutdown indexes every
// file queued before it, then closes the driver.
func TestShutdownDrainsTheQueue(t *testing.T) {
	d := shared{newMemDriver(t)}
	s := store.New(d, &store.Options{Embedder: fakeEmbedder{model: "fake"}})
	const n = 20
	for i := range n {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: fmt.Sprintf("u/main/f%02d.md", i), Content: "Likes green tea.\n"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := range n {
		p := fmt.Sprintf("u/main/%s/f%02d.md", search.IndexSegment, i)
		f, err := d.GetFile(t.Context(), p)
		if err != nil || f == nil || !strings.Contains(f.Content, `"model":"fake"`) {
			t.Errorf("index row %s after Shutdown: %v, %v", p, f, err)
		}
	}
	var nilCtx context.Context
	if err := s.Shutdown(nilCtx); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("Shutdown(nil) = %v, want ErrNilArgument", err)
	}
}

// indexWatcher is an Observer that keeps the contexts of OpIndex jobs.
type indexWatcher struct {
	mu   sync.Mutex
	jobs []context.Context
}

func (o *indexWatcher) ObserveOperation(ctx context.Context, op store.OperationInfo) (context.Context, func(store.OperationResult)) {
	if op.Op == store.OpIndex {
		o.mu.Lock()
		o.jobs = append(o.jobs, ctx)
		o.mu.Unlock()
	}
	return ctx, nil
}
func (o *indexWatcher) ObserveSettlement(context.Context, store.Settlement) {}

// TestIndexerNotUnderTheRequestContext: the indexer's work never carries
// the values of the request that queued it (before, every job ran with the
// first write's: its span parented every indexing call); each job is an
// OpIndex operation whose context links the write that queued it.
func TestIndexerNotUnderTheRequestContext(t *testing.T) {
	w := &closeWatch{Driver: newMemDriver(t), t: t}
	obs := &indexWatcher{}
	s := store.New(w, &store.Options{Embedder: fakeEmbedder{model: "fake"}, Observer: obs})
	for _, name := range []string{"a", "b"} {
		ctx := context.WithValue(t.Context(), reqKey{}, "write "+name)
		if _, err := s.Write(ctx, store.WriteRequest{Path: "u/main/" + name + ".md", Content: "Likes green tea.\n"}); err != nil {
			t.Fatal(err)
		}
		if err := s.WaitIndexed(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	seen := w.indexCtxs
	w.mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no driver call on an index row")
	}
	for _, v := range seen {
		if v != nil {
			t.Errorf("an indexing call on the driver carried the request value %v", v)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.jobs) != 2 {
		t.Fatalf("%d OpIndex jobs observed, want 2", len(obs.jobs))
	}
	for i, ctx := range obs.jobs {
		want := "write " + []string{"a", "b"}[i]
		if v := ctx.Value(reqKey{}); v != nil {
			t.Errorf("job %d runs with the request value %v", i, v)
		}
		o := background.Origin(ctx)
		if o == nil || o.Value(reqKey{}) != want {
			t.Errorf("job %d links %v, want the context of %q", i, o, want)
		}
	}
}
