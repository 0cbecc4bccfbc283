package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// newMemory returns a notebook on a fresh memstore.
func newMemory(t *testing.T) *memory.Memory {
	t.Helper()
	mem, err := memory.New(store.New(newMemDriver(t), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

func newServer(t *testing.T, mem *memory.Memory, opts *agentmemmcp.Options) *agentmemmcp.Server {
	t.Helper()
	srv, err := agentmemmcp.NewServer(mem, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// connect opens an in-memory client session to srv; it is closed when the
// test ends.
func connect(t *testing.T, srv *agentmemmcp.Server, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	return connectAs(t, srv, "test", "", copts)
}

// connectAs opens an in-memory client session named name (the user, for
// sessionUser) speaking protocol version ("" = the newest).
func connectAs(t *testing.T, srv *agentmemmcp.Server, name, version string, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: name, Version: "v0"}, copts).Connect(t.Context(), ct,
		&mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its result, failing on a protocol error.
func call(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any, meta mcpsdk.Meta) *mcpsdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// structured decodes a result's structured content, checking that its
// text content holds the same JSON.
func structured(t *testing.T, res *mcpsdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m, fromText map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content has %d items, want 1", len(res.Content))
	}
	text, ok := res.Content[0].(*mcpsdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
		t.Fatalf("text content %q is not JSON: %v", text.Text, err)
	}
	if fmt.Sprint(m) != fmt.Sprint(fromText) {
		t.Fatalf("text content %v differs from structured content %v", fromText, m)
	}
	return m
}

func write(t *testing.T, cs *mcpsdk.ClientSession, file, content string) map[string]any {
	t.Helper()
	res := call(t, cs, "write_memory", map[string]any{"content": content, "file": file, "old_text": nil}, nil)
	m := structured(t, res)
	if res.IsError {
		t.Fatalf("write_memory %s: %v", file, m)
	}
	return m
}

func read(t *testing.T, cs *mcpsdk.ClientSession, file string) string {
	t.Helper()
	res := call(t, cs, "read_memory", map[string]any{"file": file}, nil)
	m := structured(t, res)
	if res.IsError {
		t.Fatalf("read_memory %s: %v", file, m)
	}
	return m["result"].(string)
}

// keyFile writes a key file giving each user the key "key-<user>".
func keyFile(t *testing.T, users ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# test keys\n\n")
	for _, u := range users {
		fmt.Fprintf(&b, "%s %s\n", agentmemmcp.HashKey("key-"+u), u)
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveHTTP serves srv over HTTP with API keys for users; the server is
// closed when the test ends, after the client sessions (registered later,
// so cleaned up first).
func serveHTTP(t *testing.T, srv *agentmemmcp.Server, users ...string) *httptest.Server {
	t.Helper()
	keys, err := agentmemmcp.OpenKeyFile(keyFile(t, users...))
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.Handler(&agentmemmcp.HTTPOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return clientTransport.RoundTrip(r)
}

// clientTransport keeps connections for many concurrent sessions.
var clientTransport = &http.Transport{MaxIdleConns: 200, MaxIdleConnsPerHost: 200}

// connectHTTP opens a client session as user (key "key-<user>").
func connectHTTP(t *testing.T, hs *httptest.Server, user string) *mcpsdk.ClientSession {
	t.Helper()
	tr := &mcpsdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"key-" + user}}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// post sends one raw JSON-RPC body and returns the status, the
// Mcp-Session-Id of the response and the JSON-RPC message it carries (from
// JSON or from the first SSE data line), if any.
func post(t *testing.T, url, token, session string, body []byte) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(d) != "" {
				if err := json.Unmarshal([]byte(d), &msg); err != nil {
					t.Fatalf("SSE data %q: %v", d, err)
				}
				break
			}
		}
	} else if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatalf("response %q: %v", data, err)
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// rawSession initializes a session over raw HTTP and returns its id.
func rawSession(t *testing.T, url, token string) string {
	t.Helper()
	code, session, _ := post(t, url, token, "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`))
	if code != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", code, session)
	}
	code, _, _ = post(t, url, token, session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if code != http.StatusAccepted {
		t.Fatalf("initialized: status %d", code)
	}
	return session
}

// deleteSession ends a raw session, so that the server has no open stream
// when it closes.
func deleteSession(t *testing.T, url, token, session string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func writeCall(id int, content string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write_memory","arguments":{"content":%q,"file":null,"old_text":null}}}`, id, content)
}
