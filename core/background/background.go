// Package background runs the work a value does on its own behalf (an
// index that follows writes, a queue's worker, a poller) under one
// lifecycle: started by the value's constructor, never under a request's
// context, and stopped by a Shutdown that a deadline bounds.
//
// A [Group] is made by the owner's constructor and holds the work's
// context: it carries no request's values (a trace's span, a deadline) and
// is canceled only when the work has to stop. Work that a request asked
// for runs under [Group.Link], which carries the request's context as a
// link ([Origin]), not a parent, or under [Group.Detach] when it needs the
// request's values (a tenant a namespace function reads): tracing makes
// the work a trace of its own, linked to the request, which has often
// finished by the time the work runs (the otel module does).
//
// The owner's Shutdown(ctx) calls [Group.Shutdown]: no work is started any
// more, [Group.Stopping] tells long-lived workers to finish what they hold,
// and when ctx is done first, the work's context is canceled. Its Close
// calls [Group.Close], which cancels at once, as net/http's Server.Close
// does beside Server.Shutdown.
package background

import (
	"context"
	"fmt"
	"sync"
)

// Group runs the background goroutines of one owner (a store, a queue, a
// server). Its zero value is not usable: make one with [New]. It is safe
// for concurrent use.
type Group struct {
	ctx      context.Context
	cancel   context.CancelFunc
	stopping chan struct{}

	mu      sync.Mutex
	stopped bool
	running int           // goroutines started and not yet returned
	idle    chan struct{} // closed when running drops to 0 after stopped
}

// New returns a group whose work runs under a context of its own: a root
// context (no request's values, no deadline), canceled only as the group
// stops ([Group.Shutdown], at its deadline if the work has not returned by
// then; [Group.Close]). The owner's constructor makes it.
func New() *Group {
	// The one root context of agentmem's background work: the work is no
	// request's, and lives until its owner stops it.
	ctx, cancel := context.WithCancel(context.Background())
	return &Group{ctx: ctx, cancel: cancel, stopping: make(chan struct{}), idle: make(chan struct{})}
}

// Context returns the work's context: no request's values, canceled only
// as the group stops (see [New]).
func (g *Group) Context() context.Context { return g.ctx }

// Link returns the context for work that origin (a request's context)
// asked for: the work's context ([Group.Context]) carrying origin only as
// a link, which [Origin] returns. None of origin's values, cancellation or
// deadline apply to the work.
func (g *Group) Link(origin context.Context) context.Context {
	if origin == nil {
		return g.ctx
	}
	return context.WithValue(g.ctx, originKey{}, origin)
}

type originKey struct{}

// Detach returns the context for work that origin (a request's context)
// asked for and that needs origin's values (a tenant, a user that a
// namespace or metadata function reads): origin's values, the group's
// cancellation ([Group.Context]) instead of origin's cancellation and
// deadline, and origin as its link ([Origin]). Prefer [Group.Link] when
// the work needs none of origin's values. A tracer that sees the request's
// span in such a context starts a new root instead (see [Origin]).
func (g *Group) Detach(origin context.Context) context.Context {
	if origin == nil {
		return g.ctx
	}
	return detached{Context: g.ctx, origin: origin}
}

// detached is a context with the group's cancellation and origin's values.
type detached struct {
	context.Context // the group's: Deadline, Done, Err, and its own values
	origin          context.Context
}

// Value looks key up in the group's context first (which holds the
// context package's own keys, so that context.Cause and derived contexts
// follow the group's cancellation), then in origin.
func (c detached) Value(key any) any {
	if key == (originKey{}) {
		return c.origin
	}
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.origin.Value(key)
}

func (c detached) String() string { return "background.Detach(" + fmt.Sprint(c.origin) + ")" }

// Origin returns the context of the request that asked for the background
// work running under ctx ([Group.Link], [Group.Detach]), or nil when there
// is none (ctx is a request's, or the work's own, such as a timer's). It
// is a link, not a parent: the request may have finished. Tracing uses it
// to start the work's first span as a new root linked to the request's
// span (also when a Detach context still holds that span), rather than
// as its child; nothing else should read its values.
func Origin(ctx context.Context) context.Context {
	if ctx == nil {
		return nil
	}
	o, _ := ctx.Value(originKey{}).(context.Context)
	return o
}

// Go runs f on a new goroutine with the work's context ([Group.Context]),
// or reports false and runs nothing once [Group.Shutdown] or [Group.Close]
// began. f should return when [Group.Stopping] is closed and it holds no
// work, and at once when ctx is done.
func (g *Group) Go(f func(ctx context.Context)) bool {
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return false
	}
	g.running++
	g.mu.Unlock()
	go func() {
		defer g.done()
		f(g.ctx)
	}()
	return true
}

// done counts a goroutine out.
func (g *Group) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running--; g.running == 0 && g.stopped {
		close(g.idle)
	}
}

// Stopping returns a channel that is closed when [Group.Shutdown] or
// [Group.Close] begins: a worker that waits for work (a queue, a ticker)
// finishes what it holds and returns.
func (g *Group) Stopping() <-chan struct{} { return g.stopping }

// stop refuses further work and closes Stopping; it returns the channel
// closed once every goroutine returned.
func (g *Group) stop() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopped = true
		close(g.stopping)
		if g.running == 0 {
			close(g.idle)
		}
	}
	return g.idle
}

// Shutdown stops the group gracefully: [Group.Go] starts nothing more,
// [Group.Stopping] is closed, and Shutdown waits for the running
// goroutines to return. If ctx is done first, it cancels the work's
// context and returns ctx.Err() without waiting further: the work stops as
// soon as it sees its context canceled ([Group.Wait] waits for that).
// Either way the work's context is canceled when Shutdown returns. Later
// calls do the same, and so return nil once the work has stopped.
func (g *Group) Shutdown(ctx context.Context) error {
	idle := g.stop()
	defer g.cancel()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the group at once: [Group.Go] starts nothing more,
// [Group.Stopping] is closed and the work's context is canceled. It does
// not wait for the goroutines to return ([Group.Wait] does).
func (g *Group) Close() {
	g.stop()
	g.cancel()
}

// Wait blocks until the group is stopped ([Group.Shutdown] or
// [Group.Close]) and every goroutine of it has returned; after Shutdown
// gave up, or after Close, that is as long as the work takes to see its
// context canceled. An owner waits before releasing what the work uses (a
// store's driver, say).
func (g *Group) Wait() { <-g.idle }
