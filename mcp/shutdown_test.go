package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// gateDriver blocks the first file creation until released.
type gateDriver struct {
	driver.Driver
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

// gatedMemory returns a notebook over a gateDriver, and the driver.
func gatedMemory(t *testing.T) (*gateDriver, *memory.Memory) {
	t.Helper()
	d := &gateDriver{Driver: newMemDriver(t), entered: make(chan struct{}), release: make(chan struct{})}
	mem, err := memory.New(store.New(d, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, mem
}

func (d *gateDriver) CreateFile(ctx context.Context, f driver.File) error {
	if d.armed.CompareAndSwap(true, false) {
		close(d.entered)
		<-d.release
	}
	return d.Driver.CreateFile(ctx, f)
}

func TestShutdownFinishesCallsInFlight(t *testing.T) {
	d, mem := gatedMemory(t)
	srv := newServer(t, mem, nil)
	keys, err := agentmemmcp.OpenKeyFile(keyFile(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.Handler(&agentmemmcp.HTTPOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close) // after the client session's cleanup
	// A client that, like most, retries its event stream: the stream
	// ends when shutdown closes the session.
	tr := &mcpsdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"key-alice"}}}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: agentmemmcp.SnapshotURI}); err != nil {
		t.Fatal(err)
	}

	// A tool call blocks in the store; shutdown starts: http.Server.Shutdown
	// and the server's own (RegisterOnShutdown runs srv.Shutdown in its own
	// goroutine).
	hs.Config.RegisterOnShutdown(func() { _ = srv.Shutdown(t.Context()) })
	checkDrain(t, d, cs, func() error { return hs.Config.Shutdown(t.Context()) }, func() bool {
		// New requests are refused: the listener is closed, and a request
		// that reaches the handler gets 503.
		if resp, err := http.Post(hs.URL, "application/json", nil); err == nil {
			resp.Body.Close()
			return false
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/", nil))
		return rec.Code == http.StatusServiceUnavailable
	})
	if got := readAs(t, mem, "alice", "MEMORY.md"); got != "- in flight\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
}

func TestShutdownGivesUpWithItsContext(t *testing.T) {
	d, mem := gatedMemory(t)
	srv := newServer(t, mem, nil)
	hs := serveHTTP(t, srv, "alice")
	cs := connectHTTP(t, hs, "alice")
	d.armed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
			Arguments: map[string]any{"content": "- stuck", "file": nil, "old_text": nil}})
	}()
	<-d.entered
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with a stuck call: %v, want DeadlineExceeded", err)
	}
	close(d.release)
	<-done
}

// TestShutdownDrainsSessions: a session served without HTTP (here the
// in-memory transport, as stdio) has a tool call blocked in the store when
// Shutdown begins: a new call is refused with ErrShutdown's message, the
// call in flight completes and its result reaches the client, and only then
// does Shutdown return, the session closed.
func TestShutdownDrainsSessions(t *testing.T) {
	d, mem := gatedMemory(t)
	srv := newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("alice")})
	cs := connectAs(t, srv, "alice", "2025-11-25", nil)
	checkDrain(t, d, cs, func() error { return srv.Shutdown(t.Context()) }, func() bool {
		_, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "read_memory", Arguments: map[string]any{"file": nil}})
		return err != nil && strings.Contains(err.Error(), "shutting down")
	})
	if got := readAs(t, mem, "alice", "MEMORY.md"); got != "- in flight\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
}

// checkDrain blocks a write_memory call of cs in d, runs shutdown in the
// background, waits until refused reports a new request refused, then
// checks that neither shutdown nor the call returns before d lets the call
// go on, and that both do then (shutdown with nil, the call with its
// result).
func checkDrain(t *testing.T, d *gateDriver, cs *mcpsdk.ClientSession, shutdown func() error, refused func() bool) {
	t.Helper()
	d.armed.Store(true)
	type outcome struct {
		res *mcpsdk.CallToolResult
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
			Arguments: map[string]any{"content": "- in flight", "file": nil, "old_text": nil}})
		result <- outcome{res, err}
	}()
	<-d.entered
	done := make(chan error, 1)
	go func() { done <- shutdown() }()
	for deadline := time.Now().Add(10 * time.Second); !refused(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a new request during shutdown was not refused")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) with a call in flight", err)
	case o := <-result:
		t.Fatalf("the call returned (%v, %v) before the store did", o.res, o.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(d.release)
	var o outcome
	select {
	case o = <-result:
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight got no answer")
	}
	if o.err != nil || o.res.IsError {
		t.Fatalf("the call in flight: %v, %v", o.res, o.err)
	}
	if m := structured(t, o.res); m["file"] != "MEMORY.md" {
		t.Fatalf("result %v", m)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not return after the call completed")
	}
}
