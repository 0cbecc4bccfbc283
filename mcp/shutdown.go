package mcp

import (
	"context"
	"errors"
	"net/http"
	"sync"
)

// ErrShutdown reports a request that reached [Server.Handler] after
// [Server.Shutdown] began; the client gets 503 and should retry on
// another server or later.
var ErrShutdown = errors.New("agentmem/mcp: the server is shutting down: retry on another instance or later")

// inflight counts the HTTP requests in flight other than event streams
// (GET), and refuses new ones once closing.
type inflight struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{} // closed when n drops to 0 while closing
}

// track serves h, counting the non-GET requests, and answers 503 once
// Shutdown began.
func (c *inflight) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.closing {
			c.mu.Unlock()
			w.Header().Set("Connection", "close")
			http.Error(w, ErrShutdown.Error(), http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodGet {
			c.mu.Unlock()
			h.ServeHTTP(w, r)
			return
		}
		c.n++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.n--; c.n == 0 && c.idle != nil {
				close(c.idle)
				c.idle = nil
			}
		}()
		h.ServeHTTP(w, r)
	})
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
// [Server.Handler] from now on get 503 ([ErrShutdown]); the requests in
// flight, tool calls among them, finish and their responses are written;
// then every session is closed, which ends the clients' event streams
// (GET) so that http.Server.Shutdown, which waits for them, can return.
// If ctx is done first, Shutdown returns ctx.Err() and the sessions are
// closed in the background as their calls end (cancel the calls' work, or
// close the http.Server, to cut them). Call it when http.Server.Shutdown begins:
//
//	hs.RegisterOnShutdown(func() { srv.Shutdown(ctx) })
//	err := hs.Shutdown(ctx)
//
// Sessions served by [Server.Run] and [Server.Connect] end when their
// context is done or the client leaves; Shutdown closes them too, but
// does not wait for their calls.
func (s *Server) Shutdown(ctx context.Context) error {
	closeAll := func() {
		for ss := range s.sdk.Sessions() {
			_ = ss.Close()
		}
	}
	select {
	case <-s.calls.close():
		closeAll()
		return nil
	case <-ctx.Done():
		// Closing a session waits for its calls: do it in the background.
		go closeAll()
		return ctx.Err()
	}
}
