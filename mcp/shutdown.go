package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrShutdown reports a request that reached [Server.Handler] after
// [Server.Shutdown] began; the client gets 503 and should retry on
// another server or later.
var ErrShutdown = errors.New("mcp: the server is shutting down: retry on another instance or later")

// inflight counts requests in flight (the HTTP requests other than event
// streams, or the MCP requests of every session), and refuses new ones
// once closing.
type inflight struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{} // closed when n drops to 0 while closing
}

// enter counts a request in, or reports false once closing.
func (c *inflight) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.n++
	return true
}

// hold counts a request in even when closing (one already read, whose
// answer Shutdown waits for).
func (c *inflight) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
}

// leave counts a request out.
func (c *inflight) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// track serves h, counting the non-GET requests, and answers 503 once
// Shutdown began.
func (c *inflight) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			c.mu.Lock()
			closing := c.closing
			c.mu.Unlock()
			if !closing {
				h.ServeHTTP(w, r)
				return
			}
		} else if c.enter() {
			defer c.leave()
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		http.Error(w, ErrShutdown.Error(), http.StatusServiceUnavailable)
	})
}

// drain is receiving middleware: it counts the requests every session is
// handling, whatever its transport, so that Shutdown waits for them, and
// refuses new ones with ErrShutdown once Shutdown began. Notifications
// pass.
func (s *Server) drain(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if !s.handling.enter() {
			return nil, ErrShutdown
		}
		defer s.handling.leave()
		return next(ctx, method, req)
	}
}

// close refuses new requests and returns a channel closed when none is in
// flight.
func (c *inflight) close() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	if c.n == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	return c.idle
}

// Shutdown stops serving gracefully: requests that reach a handler of
// [Server.Handler] from now on get 503 ([ErrShutdown]), and requests of
// sessions on any transport (stdio, [Server.Connect]) get ErrShutdown as
// their error; the requests in flight, tool calls among them, finish and
// their responses are written; then every session is closed, which ends
// the clients' event streams (GET) so that http.Server.Shutdown, which
// waits for them, can return, and the pollers of subscribed resources stop
// (a poll in flight finishes). If ctx is done first, Shutdown returns
// ctx.Err(), the pollers' reads are canceled, and the sessions are closed
// in the background as their calls end (cancel the calls' work, or close
// the http.Server, to cut them).
// Call it when http.Server.Shutdown begins:
//
//	hs.RegisterOnShutdown(func() { srv.Shutdown(ctx) })
//	err := hs.Shutdown(ctx)
//
// Sessions served by [Server.Run] end with Shutdown too: Run returns.
func (s *Server) Shutdown(ctx context.Context) error {
	closeAll := func() {
		for ss := range s.sdk.Sessions() {
			_ = ss.Close()
		}
	}
	// HTTP requests (answered within them), then every session's handlers,
	// then the answers of Run and Connect sessions, written after their
	// handlers return.
	for _, idle := range []<-chan struct{}{s.calls.close(), s.handling.close(), s.replies.close()} {
		select {
		case <-idle:
		case <-ctx.Done():
			// Closing a session waits for its calls: do it in the background.
			go closeAll()
			s.polling.Close()
			return ctx.Err()
		}
	}
	closeAll()
	return s.polling.Shutdown(ctx)
}
