package mcp_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

var initBody = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)

// A 401 of API-key mode carries the RFC 6750 challenge: the realm, and
// error="invalid_token" when a token was sent (none without credentials).
func TestHTTPKeyChallenge(t *testing.T) {
	hs := serveHTTP(t, newServer(t, newMemory(t), nil), "alice", "bob")
	for tok, want := range map[string]string{
		"":                 `Bearer realm="agentmem"`,
		"key-mallory":      `Bearer realm="agentmem", error="invalid_token"`,
		"key-alice extra":  `Bearer realm="agentmem", error="invalid_token"`,
		"not-a-key-at-all": `Bearer realm="agentmem", error="invalid_token"`,
	} {
		resp := rawPost(t, hs.URL, tok, initBody)
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || got != want {
			t.Errorf("token %q: %d, WWW-Authenticate %q; want 401, %q", tok, resp.StatusCode, got, want)
		}
	}
	// A realm of one's own.
	keys, err := agentmemmcp.OpenKeyFile(keyFile(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := newServer(t, newMemory(t), nil).Handler(&agentmemmcp.HTTPOptions{Keys: keys, Realm: `memory "prod"`})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if got := rec.Header().Get("WWW-Authenticate"); rec.Code != http.StatusUnauthorized || got != `Bearer realm="memory \"prod\""` {
		t.Fatalf("own realm: %d %q", rec.Code, got)
	}
	// A good key's request has no challenge, nor has the 403 of a session
	// presented with another user's key (the token itself was good).
	if resp := rawPost(t, hs.URL, "key-alice", initBody); resp.StatusCode != http.StatusOK || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("good key: %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	session := rawSession(t, hs.URL, "key-alice")
	defer deleteSession(t, hs.URL, "key-alice", session)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, hs.URL, bytes.NewReader(writeCall(1, "- bob")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer key-bob")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("session theft: %d, WWW-Authenticate %q; want 403 without a challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// The handler serves MCP at its path only: 404 elsewhere, before any
// authentication.
func TestHTTPServesMCPAtItsPathOnly(t *testing.T) {
	hs := serveHTTP(t, newServer(t, newMemory(t), nil), "alice")
	for path, want := range map[string]int{"/": http.StatusOK, "/mcp": http.StatusNotFound, "/x/y": http.StatusNotFound, "/healthz": http.StatusNotFound} {
		if resp := rawPost(t, hs.URL+path, "key-alice", initBody); resp.StatusCode != want {
			t.Errorf("POST %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if resp := rawPost(t, hs.URL+"/x", "", initBody); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /x without a token: %d, want 404", resp.StatusCode)
	}

	keys, err := agentmemmcp.OpenKeyFile(keyFile(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, newMemory(t), nil)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	if err := srv.Mount(mux, &agentmemmcp.HTTPOptions{Keys: keys, Path: "/mcp"}); err != nil {
		t.Fatal(err)
	}
	ms := httptest.NewServer(mux)
	t.Cleanup(ms.Close)
	for path, want := range map[string]int{"/mcp": http.StatusOK, "/": http.StatusNotFound, "/mcp/": http.StatusNotFound, "/mcp/x": http.StatusNotFound} {
		if resp := rawPost(t, ms.URL+path, "key-alice", initBody); resp.StatusCode != want {
			t.Errorf("mounted at /mcp: POST %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Get(ms.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz beside MCP: %d", resp.StatusCode)
	}
	cs := connectHTTP(t, &httptest.Server{URL: ms.URL + "/mcp"}, "alice")
	write(t, cs, "MEMORY.md", "- at /mcp")

	// A path the mux serves already, or an invalid one, is an error, never
	// a panic.
	for _, o := range []*agentmemmcp.HTTPOptions{
		{Keys: keys, Path: "/mcp"}, {Keys: keys, Path: "mcp"}, {Keys: keys, Path: "/.well-known/x"},
		{Keys: keys, Path: "/a?b"}, {Keys: keys, Realm: "a\nb"}, {Path: "/other"},
	} {
		if err := srv.Mount(mux, o); !errors.Is(err, agentmemmcp.ErrHTTPOptions) {
			t.Errorf("Mount(%+v): %v, want ErrHTTPOptions", o, err)
		}
	}
	if err := srv.Mount(nil, &agentmemmcp.HTTPOptions{Keys: keys}); !errors.Is(err, agentmemmcp.ErrHTTPOptions) {
		t.Errorf("Mount(nil mux): %v", err)
	}
}
