package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// blockingDriver blocks its first file creation until released.
type blockingDriver struct {
	driver.Driver
	armed            atomic.Bool
	entered, release chan struct{}
}

func (d *blockingDriver) CreateFile(ctx context.Context, f driver.File) error {
	if d.armed.CompareAndSwap(true, false) {
		close(d.entered)
		<-d.release
	}
	return d.Driver.CreateFile(ctx, f)
}

// syncBuffer is a strings.Builder safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeShutdownFinishesCallsInFlight: a signal (ctx done) while a tool
// call is blocked in the store: new requests are refused, the call
// completes and its result reaches the client, then serve returns nil.
func TestServeShutdownFinishesCallsInFlight(t *testing.T) {
	d := &blockingDriver{Driver: newMemDriver(t), entered: make(chan struct{}), release: make(chan struct{})}
	mem, err := memory.New(store.New(d, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keyPath, []byte(agentmemmcp.HashKey("key-ana")+" ana\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := agentmemmcp.OpenKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &stderr}
	ctx, signal := context.WithCancel(t.Context())
	defer signal()
	served := make(chan error, 1)
	go func() {
		served <- a.serveHTTP(ctx, srv, mem.Store(), &agentmemmcp.HTTPOptions{Keys: keys}, nil,
			&serveFlags{listen: "127.0.0.1:0", keys: keyPath, maxBody: agentmemmcp.DefaultMaxBodyBytes, shutdownTimeout: 30 * time.Second})
	}()
	addr := regexp.MustCompile(`serving MCP on (http://[0-9.:]+/)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
	tr := &mcpsdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport("key-ana")}}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	checkDrain(t, d, cs, signal, served, &stderr, func() bool {
		resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
		if err != nil {
			return true // the listener is closed
		}
		resp.Body.Close()
		return false
	})
	scope, err := mem.Scope(t.Context(), memory.Invocation{Namespace: memory.EscapeNamespace("ana")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := mem.Store().Read(t.Context(), scope+"/MEMORY.md", 100)
	if err != nil || f.Content != "- in flight\n" {
		t.Fatalf("MEMORY.md: %v, %v", f, err)
	}
}

// TestServeStdioShutdownFinishesCallsInFlight: over stdio, a signal while
// a tool call is blocked in the store: a new request is refused, the call
// completes and its result reaches the client, then serve returns nil,
// though the client keeps stdin open.
func TestServeStdioShutdownFinishesCallsInFlight(t *testing.T) {
	d := &blockingDriver{Driver: newMemDriver(t), entered: make(chan struct{}), release: make(chan struct{})}
	mem, err := memory.New(store.New(d, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("ana")})
	if err != nil {
		t.Fatal(err)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	t.Cleanup(func() { fromClient.Close(); fromServer.Close() })
	var stderr syncBuffer
	a := &app{stdin: toServer, stdout: fromServer, stderr: &stderr}
	ctx, signal := context.WithCancel(t.Context())
	defer signal()
	served := make(chan error, 1)
	go func() { served <- a.serveStdio(ctx, srv, &serveFlags{shutdownTimeout: 30 * time.Second}) }()
	ct := &mcpsdk.IOTransport{Reader: toClient, Writer: fromClient}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	checkDrain(t, d, cs, signal, served, &stderr, func() bool {
		_, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "read_memory", Arguments: map[string]any{"file": nil}})
		return err != nil && strings.Contains(err.Error(), "shutting down")
	})
}

// checkDrain blocks a write_memory call of cs in d, signals, waits until
// refused reports a new request refused, then checks that neither serve
// (served) nor the call returns before d lets the call go on, and that
// both do then, serve with nil, having said it was shutting down.
func checkDrain(t *testing.T, d *blockingDriver, cs *mcpsdk.ClientSession, signal func(), served <-chan error, stderr *syncBuffer, refused func() bool) {
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
	signal() // SIGTERM
	for deadline := time.Now().Add(10 * time.Second); !refused(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a new request during shutdown was not refused")
		}
	}
	select {
	case err := <-served:
		t.Fatalf("serve returned (%v) with a call in flight", err)
	case o := <-result:
		t.Fatalf("the call returned (%v, %v) before the store did", o.res, o.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(d.release)
	select {
	case o := <-result:
		if o.err != nil || o.res.IsError {
			t.Fatalf("the call in flight: %v, %v", o.res, o.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight got no answer")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the call completed")
	}
	if !strings.Contains(stderr.String(), "shutting down, finishing calls in flight") {
		t.Errorf("logs: %s", stderr.String())
	}
}

// TestServeNotifiesChangesFromOtherProcesses: a subscriber of a server on
// a SQLite file hears of an `agentmem append` to the same file, which goes
// through a store of its own (another connection, as another process).
func TestServeNotifiesChangesFromOtherProcesses(t *testing.T) {
	storeURL := "sqlite:" + filepath.Join(t.TempDir(), "memory.db")
	s, err := store.Open(t.Context(), storeURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("ana"), PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	notes := make(chan string, 8)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) { notes <- req.Params.URI },
	}).Connect(t.Context(), ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///MEMORY.md"}); err != nil {
		t.Fatal(err)
	}
	scope, err := mem.Scope(t.Context(), memory.Invocation{Namespace: memory.EscapeNamespace("ana")})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, timeout: 30 * time.Second}
	if code := cli.run(t.Context(), []string{"--store", storeURL, "append", "--operation-id", "job/1", scope + "/MEMORY.md", "--", "- from the CLI"}); code != exitOK {
		t.Fatalf("agentmem append: exit %d: %s", code, errOut.String())
	}
	select {
	case uri := <-notes:
		if uri != "memory:///MEMORY.md" {
			t.Fatalf("notification for %s", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the CLI's append")
	}
}

// probeDriver counts the driver calls and fails them when told to.
type probeDriver struct {
	driver.Driver
	calls atomic.Int64
	fail  atomic.Bool
}

func (d *probeDriver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	d.calls.Add(1)
	if d.fail.Load() {
		return nil, errors.New("connection refused")
	}
	return d.Driver.GetFile(ctx, path)
}

func (d *probeDriver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	d.calls.Add(1)
	return d.Driver.ListFiles(ctx, p)
}

// TestServeHealthAndReadiness: beside MCP at its path, GET /healthz
// answers without authentication or a store call, GET /readyz with one
// bounded read (503 when the store fails), and any other path is 404.
func TestServeHealthAndReadiness(t *testing.T) {
	d := &probeDriver{Driver: newMemDriver(t)}
	s := store.New(d, nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keyPath, []byte(agentmemmcp.HashKey("key-ana")+" ana\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := agentmemmcp.OpenKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &stderr}
	h, err := a.httpHandler(srv, s, &agentmemmcp.HTTPOptions{Keys: keys, Path: "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" || d.calls.Load() != 0 {
		t.Fatalf("/healthz: %d %q after %d store calls; want 200 without any", code, body, d.calls.Load())
	}
	if code, body := get("/readyz"); code != http.StatusOK || body != "ready\n" || d.calls.Load() != 1 {
		t.Fatalf("/readyz: %d %q after %d store calls; want 200 after one", code, body, d.calls.Load())
	}
	d.fail.Store(true)
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(stderr.String(), "/readyz: the store did not answer: connection refused") {
		t.Fatalf("/readyz on a failing store: %d, logs %q", code, stderr.String())
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz on a failing store: %d, want 200 (the process serves)", code)
	}
	d.fail.Store(false)
	for _, path := range []string{"/", "/x", "/mcp/"} {
		if code, _ := get(path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	if code, _ := get("/mcp"); code != http.StatusUnauthorized {
		t.Errorf("GET /mcp without a key: %d, want 401", code)
	}
	tr := &mcpsdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("key-ana")}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "probe-test", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
		Arguments: map[string]any{"content": "- at /mcp", "file": nil, "old_text": nil}}); err != nil || res.IsError {
		t.Fatalf("write at /mcp: %v, %v", res, err)
	}
	f, err := s.Read(t.Context(), "ana/main/MEMORY.md", 100)
	if err != nil || f.Metadata[memory.UpdatedByKey] != "ana" || f.Metadata[memory.ClientKey] != "probe-test" {
		t.Fatalf("HTTP write: %+v, %v; want updated_by ana, client probe-test", f, err)
	}
}

// TestServeStdioRecordsWho: a write through serve --transport stdio
// records the --user and the client's name.
func TestServeStdioRecordsWho(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("ana")})
	if err != nil {
		t.Fatal(err)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	a := &app{stdin: toServer, stdout: fromServer, stderr: &syncBuffer{}}
	served := make(chan error, 1)
	go func() { served <- a.serveStdio(t.Context(), srv, &serveFlags{shutdownTimeout: 30 * time.Second}) }()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "claude-desktop", Version: "v0"}, nil).Connect(t.Context(),
		&mcpsdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
		Arguments: map[string]any{"content": "- over stdio", "file": nil, "old_text": nil}}); err != nil || res.IsError {
		t.Fatalf("write: %v, %v", res, err)
	}
	cs.Close()
	fromClient.Close()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	f, err := s.Read(t.Context(), "ana/main/MEMORY.md", 100)
	if err != nil || f.Metadata[memory.UpdatedByKey] != "ana" || f.Metadata[memory.ClientKey] != "claude-desktop" {
		t.Fatalf("stdio write: %+v, %v; want updated_by ana, client claude-desktop", f, err)
	}
}

// TestServePathFlag: --path must be a URL path other than the probes'.
func TestServePathFlag(t *testing.T) {
	keyPath := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keyPath, []byte(agentmemmcp.HashKey("k")+" ana\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"mcp", "/healthz", "/readyz", "/.well-known/x", "/a?b"} {
		var out, errOut syncBuffer
		cli := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, timeout: 30 * time.Second}
		code := cli.run(t.Context(), []string{"--store", "mem:", "serve", "--transport", "http", "--keys", keyPath, "--path", path})
		if code != exitUsage || !strings.Contains(errOut.String(), "--path") {
			t.Errorf("--path %q: exit %d, %q; want %d naming --path", path, code, errOut.String(), exitUsage)
		}
	}
	var errOut syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &errOut, timeout: 30 * time.Second}
	if code := cli.run(t.Context(), []string{"--store", "mem:", "serve", "--user", "ana", "--path", "/mcp"}); code != exitUsage {
		t.Errorf("stdio with --path: exit %d, %q; want %d", code, errOut.String(), exitUsage)
	}
}
