package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/mcp/oauthtest"
)

// writeKeys writes a key file: each line "key-<user> <user> [role]" as
// given, hashed.
func writeKeys(t *testing.T, lines ...string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		f := strings.Fields(l)
		b.WriteString(agentmemmcp.HashKey("key-" + f[0]))
		for _, x := range f {
			b.WriteString(" " + x)
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServe runs `agentmem <args>` (a serve --transport http) until the
// test ends and returns its base URL (http://host:port).
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	var stderr syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &stderr, timeout: 30 * time.Second}
	done := make(chan int, 1)
	go func() { done <- cli.run(ctx, args) }()
	t.Cleanup(func() {
		stop()
		if code := <-done; code != exitOK {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	})
	addr := regexp.MustCompile(`serving MCP on (http://[0-9.:]+)/`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited %d before serving: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
}

// apiResponse is one response of the API, read whole.
type apiResponse struct {
	code int
	h    http.Header
	body string
}

// do sends one request with key (none when empty) and headers (name,
// value pairs).
func do(t *testing.T, method, url, key, body string, headers ...string) apiResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "text/markdown")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apiResponse{resp.StatusCode, resp.Header, string(b)}
}

// TestServeAPIFlow is the "Done when" through the real serve
// command: with a user key, create (201, ETag), update with If-Match
// (200), a stale ETag 412 writing nothing, a repeated Idempotency-Key
// applied once; another user's key gets 404 and writes nothing, and 403
// on the admin listing; an admin key lists the namespaces and reads
// every one; the probes answer; MCP answers only at --path, and over it
// the admin key is one user.
func TestServeAPIFlow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	keys := writeKeys(t, "ana", "bob user", "ops admin")
	base := startServe(t, "--store", "sqlite:"+db, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp")
	file := base + "/api/v1/namespaces/ana/files/main/MEMORY.md"

	r := do(t, "PUT", file, "key-ana", "- likes tea\n")
	v1 := r.h.Get("ETag")
	if r.code != http.StatusCreated || v1 == "" {
		t.Fatalf("create: %d %q, ETag %q; want 201 with an ETag", r.code, r.body, v1)
	}
	r = do(t, "PUT", file, "key-ana", "- likes green tea\n", "If-Match", v1)
	v2 := r.h.Get("ETag")
	if r.code != http.StatusOK || v2 == "" || v2 == v1 {
		t.Fatalf("update with If-Match: %d %q, ETag %q; want 200 with a new ETag", r.code, r.body, v2)
	}
	if r = do(t, "PUT", file, "key-ana", "- stale\n", "If-Match", v1); r.code != http.StatusPreconditionFailed {
		t.Fatalf("stale If-Match: %d %q, want 412", r.code, r.body)
	}
	if r = do(t, "GET", file, "key-ana", ""); r.code != http.StatusOK || r.h.Get("ETag") != v2 || !strings.Contains(r.body, "green tea") {
		t.Fatalf("read after the stale write: %d %q, ETag %q; want 200, %s, green tea", r.code, r.body, r.h.Get("ETag"), v2)
	}

	// The same Idempotency-Key twice: applied once, answered the same.
	notes := base + "/api/v1/namespaces/ana/files/main/notes.md"
	first := do(t, "PUT", notes, "key-ana", "- once\n", "If-None-Match", "*", "Idempotency-Key", "job-1")
	again := do(t, "PUT", notes, "key-ana", "- once\n", "If-None-Match", "*", "Idempotency-Key", "job-1")
	if first.code != http.StatusCreated || again.code != first.code || again.h.Get("ETag") != first.h.Get("ETag") || again.h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retried create: %d %q then %d %q (replayed %q); want the same 201 twice, the second replayed",
			first.code, first.h.Get("ETag"), again.code, again.h.Get("ETag"), again.h.Get("Idempotent-Replayed"))
	}

	// Bob reaches nothing of ana's and writes nothing.
	for _, c := range []struct{ method, url, body string }{
		{"GET", file, ""}, {"PUT", file, "- bob was here\n"}, {"DELETE", file, ""},
		{"GET", base + "/api/v1/namespaces/ana/files", ""}, {"GET", base + "/api/v1/namespaces/ana/search?q=tea", ""},
	} {
		r := do(t, c.method, c.url, "key-bob", c.body, "If-Match", v2)
		if r.code != http.StatusNotFound || strings.Contains(r.body, "tea") {
			t.Errorf("bob %s %s: %d %q, want 404 showing nothing", c.method, c.url, r.code, r.body)
		}
	}
	if r = do(t, "GET", base+"/api/v1/namespaces", "key-bob", ""); r.code != http.StatusForbidden {
		t.Errorf("bob lists namespaces: %d, want 403", r.code)
	}
	if r = do(t, "GET", file, "key-ana", ""); r.h.Get("ETag") != v2 {
		t.Fatalf("ana's file after bob: ETag %q, want %s: bob wrote", r.h.Get("ETag"), v2)
	}

	// The admin key lists the namespaces and reads ana's file.
	r = do(t, "GET", base+"/api/v1/namespaces", "key-ops", "")
	var list console.NamespacesJSON
	if err := json.Unmarshal([]byte(r.body), &list); r.code != http.StatusOK || err != nil || len(list.Namespaces) != 1 || list.Namespaces[0].Name != "ana" {
		t.Fatalf("admin lists namespaces: %d %q (%v); want 200 with ana alone", r.code, r.body, err)
	}
	if r = do(t, "GET", file, "key-ops", ""); r.code != http.StatusOK || r.h.Get("ETag") != v2 {
		t.Fatalf("admin reads ana's file: %d %q", r.code, r.body)
	}
	// The whole console handler is under /console/ too (its pages at its
	// root), and the API refuses a path that is not clean, unredirected.
	if r = do(t, "GET", base+"/console/api/v1/namespaces/ana/files/main/MEMORY.md", "key-ana", ""); r.code != http.StatusOK || r.h.Get("ETag") != v2 {
		t.Fatalf("GET /console/api/v1/…: %d %q", r.code, r.body)
	}
	if r = do(t, "GET", base+"/api/v1/namespaces/bob/../ana/files/main/MEMORY.md", "key-bob", ""); r.code != http.StatusBadRequest {
		t.Fatalf("a path with ..: %d, want 400", r.code)
	}

	// Unknown and missing keys: 401 with the challenge.
	for _, key := range []string{"", "key-mallory"} {
		if r = do(t, "GET", file, key, ""); r.code != http.StatusUnauthorized || !strings.HasPrefix(r.h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("key %q: %d, WWW-Authenticate %q; want 401 with a Bearer challenge", key, r.code, r.h.Get("WWW-Authenticate"))
		}
	}

	// The probes, and MCP only at its path.
	if r = do(t, "GET", base+"/healthz", "", ""); r.code != http.StatusOK {
		t.Errorf("/healthz: %d", r.code)
	}
	if r = do(t, "GET", base+"/readyz", "", ""); r.code != http.StatusOK {
		t.Errorf("/readyz: %d", r.code)
	}
	for _, p := range []string{"/", "/x", "/mcp/", "/api/v1/mcp", "/console/mcp"} {
		if r = do(t, "POST", base+p, "key-ana", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "Content-Type", "application/json"); r.code != http.StatusNotFound || strings.Contains(r.body, "jsonrpc") {
			t.Errorf("POST %s: %d %q; want 404, not MCP", p, r.code, r.body)
		}
	}
	tr := &mcpsdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("key-ops")}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "probe", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "read_memory", Arguments: map[string]any{"file": "MEMORY.md"}})
	if err != nil || strings.Contains(toolText(res), "green tea") {
		t.Fatalf("the admin key read ana's MEMORY.md over MCP: %v, %v", toolText(res), err)
	}

	// Every write recorded who made it.
	s, err := store.Open(t.Context(), "sqlite:"+db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := s.Read(t.Context(), "ana/main/MEMORY.md", 100)
	if err != nil || f.Metadata[console.UpdatedByKey] != "ana" || f.Metadata[console.ClientKey] != apiClient {
		t.Fatalf("ana/main/MEMORY.md: %+v, %v; want updated_by ana, client %s", f, err, apiClient)
	}
}

func toolText(res *mcpsdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// archiveOf is the export archive of a namespace ns holding one file of
// size bytes.
func archiveOf(t *testing.T, ns string, size int) string {
	t.Helper()
	s, err := store.Open(t.Context(), "mem:", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: ns + "/main/big.md", Content: strings.Repeat("- a fact\n", size/9+1)[:size]}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := archive.Export(t.Context(), s, ns+"/", &b, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestServeBodyLimits: --max-body bounds a file write and --max-import
// an import, each on its own: an archive over --max-body but within
// --max-import is imported, one over --max-import is 413 problem+json
// writing nothing, and so is a write over --max-body, on both the API's
// paths.
func TestServeBodyLimits(t *testing.T) {
	keys := writeKeys(t, "ana", "bea")
	base := startServe(t, "--store", "mem:", "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0",
		"--max-body", "4096", "--max-import", "65536")
	tooLarge := func(what string, r apiResponse) {
		t.Helper()
		var p console.Problem
		if err := json.Unmarshal([]byte(r.body), &p); r.code != http.StatusRequestEntityTooLarge || r.h.Get("Content-Type") != "application/problem+json" || err != nil || p.Type != console.ProblemTypePrefix+"too-large" {
			t.Errorf("%s: %d %s %q, want 413 problem+json too-large", what, r.code, r.h.Get("Content-Type"), r.body)
		}
	}
	for _, root := range []string{base, base + "/console"} {
		file := root + "/api/v1/namespaces/ana/files/main/notes.md"
		tooLarge("a write over --max-body", do(t, "PUT", file, "key-ana", strings.Repeat("x", 4097), "If-None-Match", "*"))
		if r := do(t, "GET", file, "key-ana", ""); r.code != http.StatusNotFound {
			t.Fatalf("after a refused write: %d %q, want 404", r.code, r.body)
		}
	}
	if r := do(t, "PUT", base+"/api/v1/namespaces/ana/files/main/notes.md", "key-ana", strings.Repeat("x", 4000), "If-None-Match", "*"); r.code != http.StatusCreated {
		t.Fatalf("a write within --max-body: %d %q", r.code, r.body)
	}
	ar := archiveOf(t, "ana", 20000)
	if len(ar) <= 4096 || len(ar) > 65536 {
		t.Fatalf("the archive is %d bytes, want between the limits", len(ar))
	}
	r := do(t, "POST", base+"/api/v1/namespaces/ana/import", "key-ana", ar, "Content-Type", "application/x-tar")
	if r.code != http.StatusOK || !strings.Contains(r.body, `"created":1`) {
		t.Fatalf("an import over --max-body within --max-import: %d %q, want 200 creating the file", r.code, r.body)
	}
	big := archiveOf(t, "bea", 70000)
	for _, root := range []string{base, base + "/console"} {
		tooLarge("an import over --max-import", do(t, "POST", root+"/api/v1/namespaces/bea/import", "key-bea", big, "Content-Type", "application/x-tar"))
	}
	if r := do(t, "GET", base+"/api/v1/namespaces/bea/files/main/big.md", "key-bea", ""); r.code != http.StatusNotFound {
		t.Fatalf("after a refused import: %d %q, want 404", r.code, r.body)
	}
}

// TestServeConsolePrincipals: the console's Authenticate resolves API
// keys by their role and OAuth tokens by the admin scope, checks the
// required scopes, answers ErrUnauthenticated for what a client must fix
// and another error when the key file cannot be read.
func TestServeConsolePrincipals(t *testing.T) {
	is, err := oauthtest.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	defer is.Close()
	const audience = "https://memory.example.test/mcp"
	oauth, err := agentmemmcp.NewOAuthVerifier(t.Context(), agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	keyPath := writeKeys(t, "ana", "ops admin")
	keys, err := agentmemmcp.OpenKeyFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	authn := principalFunc(keys, oauth, []string{"memory"}, DefaultAdminScope)
	token := func(user, scope string) string {
		c := is.Claims(user, audience)
		c["scope"] = scope
		tok, err := is.Token("RS256", c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	expired := is.Claims("kim", audience)
	expired["exp"], expired["scope"] = time.Now().Add(-time.Hour).Unix(), "memory"
	expiredToken, err := is.Token("ES256", expired)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, auth string
		want       console.Principal
		unauth     bool
	}{
		{"user key", "Bearer key-ana", console.Principal{User: "ana", Client: apiClient}, false},
		{"admin key", "bearer key-ops", console.Principal{User: "ops", Admin: true, Client: apiClient}, false},
		{"user token", "Bearer " + token("kim", "memory"), console.Principal{User: "kim", Client: apiClient}, false},
		{"admin token", "Bearer " + token("lee", "memory "+DefaultAdminScope), console.Principal{User: "lee", Admin: true, Client: apiClient}, false},
		{"admin scope without the required one", "Bearer " + token("lee", DefaultAdminScope), console.Principal{}, true},
		{"expired token", "Bearer " + expiredToken, console.Principal{}, true},
		{"unknown key", "Bearer key-mallory", console.Principal{}, true},
		{"no credentials", "", console.Principal{}, true},
		{"another scheme", "Basic a2V5LWFuYQ==", console.Principal{}, true},
	} {
		r, _ := http.NewRequestWithContext(t.Context(), "GET", "/api/v1/me", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		p, err := authn(r)
		if c.unauth {
			if !errors.Is(err, console.ErrUnauthenticated) {
				t.Errorf("%s: %+v, %v; want ErrUnauthenticated", c.name, p, err)
			}
			continue
		}
		if err != nil || p != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, p, err, c.want)
		}
	}
	// A key file that cannot be read fails closed, and not as a client's
	// error.
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequestWithContext(t.Context(), "GET", "/api/v1/me", nil)
	r.Header.Set("Authorization", "Bearer key-ana")
	if p, err := authn(r); err == nil || errors.Is(err, console.ErrUnauthenticated) || !errors.Is(err, agentmemmcp.ErrKeyFile) {
		t.Fatalf("missing key file: %+v, %v; want ErrKeyFile, not ErrUnauthenticated", p, err)
	}
}

// TestServeFlagsFromEnvironment: every serve flag also comes from
// AGENTMEM_<FLAG>; the command line wins; a bad value names its variable;
// an http variable over stdio is refused naming it.
func TestServeFlagsFromEnvironment(t *testing.T) {
	keys := writeKeys(t, "ana")
	t.Setenv("AGENTMEM_TRANSPORT", "http")
	t.Setenv("AGENTMEM_KEYS", keys)
	t.Setenv("AGENTMEM_LISTEN", "256.0.0.1:1") // the flag below wins
	t.Setenv("AGENTMEM_PATH", "/mcp")
	base := startServe(t, "--store", "mem:", "serve", "--listen", "127.0.0.1:0")
	if r := do(t, "GET", base+"/mcp", "", ""); r.code != http.StatusUnauthorized {
		t.Fatalf("GET /mcp ($AGENTMEM_PATH): %d, want 401", r.code)
	}
	if r := do(t, "GET", base+"/api/v1/me", "key-ana", ""); r.code != http.StatusOK || !strings.Contains(r.body, "ana") {
		t.Fatalf("GET /api/v1/me with ana's key ($AGENTMEM_KEYS): %d %q", r.code, r.body)
	}

	run := func(args ...string) (int, string) {
		var errOut syncBuffer
		cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &errOut, timeout: 30 * time.Second}
		return cli.run(t.Context(), args), errOut.String()
	}
	t.Setenv("AGENTMEM_MAX_BODY", "lots")
	if code, out := run("--store", "mem:", "serve"); code != exitUsage || !strings.Contains(out, `$AGENTMEM_MAX_BODY="lots"`) {
		t.Errorf("AGENTMEM_MAX_BODY=lots: exit %d, %q; want %d naming the variable", code, out, exitUsage)
	}
	os.Unsetenv("AGENTMEM_MAX_BODY")
	t.Setenv("AGENTMEM_PATH", "/healthz")
	if code, out := run("--store", "mem:", "serve"); code != exitUsage || !strings.Contains(out, "$AGENTMEM_PATH") {
		t.Errorf("AGENTMEM_PATH=/healthz: exit %d, %q; want %d naming the variable", code, out, exitUsage)
	}
	t.Setenv("AGENTMEM_TRANSPORT", "stdio")
	if code, out := run("--store", "mem:", "serve", "--user", "ana"); code != exitUsage || !strings.Contains(out, "$AGENTMEM_KEYS") {
		t.Errorf("stdio with AGENTMEM_KEYS: exit %d, %q; want %d naming the variable", code, out, exitUsage)
	}
	var help syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &help, stderr: &help, timeout: 30 * time.Second}
	cli.run(t.Context(), []string{"serve", "--help"})
	for _, want := range []string{"($AGENTMEM_LISTEN)", "($AGENTMEM_OAUTH_ADMIN_SCOPE)", "($AGENTMEM_SHUTDOWN_TIMEOUT)", "AGENTMEM_TIMEOUT"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("serve --help does not show %s", want)
		}
	}
}

// serve --model puts a model behind the console's "Consolidate now": the
// API's consolidate route answers 501 without one, and applies a
// consolidation with one.
func TestServeConsolidateModel(t *testing.T) {
	dir := t.TempDir()
	keys := writeKeys(t, "ana")
	script := filepath.Join(dir, "answers.json")
	answer := `{"edits":[{"file":"MEMORY.md","content":"- prefers trains","old_text":null}]}`
	if err := os.WriteFile(script, []byte(`[{"text":`+strconv.Quote(answer)+`,"model":"scripted"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, withModel := range []bool{false, true} {
		args := []string{"--store", "sqlite:" + filepath.Join(dir, fmt.Sprint(withModel, ".db")), "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp"}
		if withModel {
			args = append(args, "--model", "script:"+script)
		}
		base := startServe(t, args...)
		pruned := base + "/api/v1/namespaces/ana/files/main/pruned.md"
		if r := do(t, "PUT", pruned, "key-ana", "- user: I take the train to Porto every month\n"); r.code != http.StatusCreated {
			t.Fatalf("seed pruned.md: %d %q", r.code, r.body)
		}
		r := do(t, "POST", base+"/api/v1/namespaces/ana/consolidate", "key-ana", "")
		switch {
		case !withModel && r.code != http.StatusNotImplemented:
			t.Fatalf("consolidate without --model: %d %q, want 501", r.code, r.body)
		case withModel && r.code != http.StatusOK:
			t.Fatalf("consolidate with --model: %d %q, want 200", r.code, r.body)
		}
		if withModel {
			if f := do(t, "GET", base+"/api/v1/namespaces/ana/files/main/MEMORY.md", "key-ana", ""); f.code != http.StatusOK || !strings.Contains(f.body, "prefers trains") {
				t.Fatalf("MEMORY.md after consolidating: %d %q", f.code, f.body)
			}
		}
	}
}
