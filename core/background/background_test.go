package background_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/background"
)

// returns fails the test unless f returns within a generous bound (a hang,
// not a speed, is what it catches).
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s has not returned after 10 s", what)
	}
}

func TestShutdownWaitsForWork(t *testing.T) {
	g := background.New()
	release := make(chan struct{})
	finished := make(chan struct{})
	if !g.Go(func(ctx context.Context) {
		<-release
		if ctx.Err() != nil {
			t.Error("the work's context was canceled before Shutdown gave up")
		}
		close(finished)
	}) {
		t.Fatal("Go refused work before Shutdown")
	}
	shut := make(chan error, 1)
	go func() { shut <- g.Shutdown(t.Context()) }()
	<-g.Stopping()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while work was running", err)
	default:
	}
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-finished:
	default:
		t.Fatal("Shutdown returned before the work finished")
	}
	if g.Context().Err() == nil {
		t.Error("the work's context is not canceled after Shutdown")
	}
	if g.Go(func(context.Context) { t.Error("work ran after Shutdown") }) {
		t.Error("Go accepted work after Shutdown")
	}
	g.Wait()
}

func TestShutdownDeadlineCancelsWork(t *testing.T) {
	g := background.New()
	g.Go(func(ctx context.Context) { <-ctx.Done() }) // ignores Stopping
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	var err error
	returns(t, "Shutdown", func() { err = g.Shutdown(ctx) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want context.DeadlineExceeded", err)
	}
	returns(t, "Wait after the work's context was canceled", g.Wait)
	if err := g.Shutdown(t.Context()); err != nil {
		t.Errorf("a second Shutdown once the work stopped = %v, want nil", err)
	}
}

func TestShutdownDoesNotWaitForWorkIgnoringItsContext(t *testing.T) {
	g := background.New()
	hang := make(chan struct{})
	defer close(hang)
	g.Go(func(context.Context) { <-hang })
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	returns(t, "Shutdown", func() { _ = g.Shutdown(ctx) })
	returns(t, "Close", g.Close)
}

func TestCloseCancelsAtOnce(t *testing.T) {
	g := background.New()
	started := make(chan struct{})
	g.Go(func(ctx context.Context) { close(started); <-ctx.Done() })
	<-started
	returns(t, "Close", g.Close)
	returns(t, "Wait", g.Wait)
	if g.Go(func(context.Context) {}) {
		t.Error("Go accepted work after Close")
	}
}

func TestStoppingEndsAWorkerLoop(t *testing.T) {
	g := background.New()
	work := make(chan int)
	var done []int
	g.Go(func(ctx context.Context) {
		for {
			select {
			case n := <-work:
				done = append(done, n)
			case <-g.Stopping():
				return
			}
		}
	})
	work <- 1
	work <- 2
	returns(t, "Shutdown", func() {
		if err := g.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	if len(done) != 2 {
		t.Errorf("done %v, want [1 2]", done)
	}
}

type key struct{}

func TestLinkCarriesTheOriginNotItsValuesOrCancellation(t *testing.T) {
	g := background.New()
	defer g.Close()
	req, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "request"))
	ctx := g.Link(req)
	cancel()
	if ctx.Err() != nil {
		t.Error("the linked context was canceled with its origin")
	}
	if ctx.Value(key{}) != nil {
		t.Error("the linked context carries its origin's values")
	}
	if o := background.Origin(ctx); o != req {
		t.Errorf("Origin = %v, want the request's context", o)
	}
	if background.Origin(req) != nil || background.Origin(g.Context()) != nil || background.Origin(nil) != nil {
		t.Error("Origin of a context without a link is not nil")
	}
	if g.Link(nil) != g.Context() {
		t.Error("Link(nil) is not the work's context")
	}
	g.Close()
	if ctx.Err() == nil {
		t.Error("the linked context outlived Close")
	}
}

func TestConcurrentGoAndShutdown(t *testing.T) {
	g := background.New()
	start := make(chan struct{})
	for range 8 {
		go func() {
			<-start
			for range 100 {
				g.Go(func(context.Context) {})
			}
		}()
	}
	close(start)
	returns(t, "Shutdown", func() {
		if err := g.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	returns(t, "Wait", g.Wait)
}

func TestDetachKeepsValuesNotCancellation(t *testing.T) {
	g := background.New()
	req, cancel := context.WithTimeout(context.WithValue(t.Context(), key{}, "tenant"), time.Hour)
	ctx := g.Detach(req)
	cancel()
	if ctx.Err() != nil || context.Cause(ctx) != nil {
		t.Errorf("the detached context follows its origin's cancellation: %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
	if _, ok := ctx.Deadline(); ok {
		t.Error("the detached context has its origin's deadline")
	}
	if ctx.Value(key{}) != "tenant" {
		t.Error("the detached context lost its origin's values")
	}
	if background.Origin(ctx) != req {
		t.Error("Origin of a detached context is not its origin")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	g.Close()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context derived from a detached one outlived Close")
	}
	if !errors.Is(context.Cause(child), context.Canceled) {
		t.Errorf("Cause = %v, want context.Canceled", context.Cause(child))
	}
	if g.Detach(nil) != g.Context() {
		t.Error("Detach(nil) is not the work's context")
	}
}
