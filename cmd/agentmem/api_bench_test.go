package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// BenchmarkServeAPI measures `agentmem serve --transport http` on one
// SQLite store over loopback, with one user key: the JSON API's writes and
// reads beside MCP's write_memory and read_memory (streamable HTTP) on the
// same listener and store, in the same run, so the figures compare. Each
// op is one request; each reports calls/s and the p50 and p99 latency in
// µs, as e2e's BenchmarkMCPToolCalls does for MCP in memory.
//
//   - api-create: PUT of a new file with If-None-Match: * (201)
//   - api-update: PUT of a 100-line file with If-Match, the ETag of the
//     previous write (200)
//   - api-read: GET of a 100-line file (200)
//   - mcp-write: write_memory appending a line (a new file every 100)
//   - mcp-read: read_memory of the same 100-line file api-read reads
//
// Every write carries an idempotency key (the Idempotency-Key header, MCP's
// _meta key), as a client that retries sends.
func BenchmarkServeAPI(b *testing.B) {
	db := filepath.Join(b.TempDir(), "memory.db")
	keys := keyFileOf(b, "bench-key ana")
	base := runServe(b, "--store", "sqlite:"+db, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp")
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	files := base + "/api/v1/namespaces/ana/files/main/"

	tr := &mcpsdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("bench-key")}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	// The file both reads read: 100 lines written over MCP.
	for i := range 100 {
		res, err := cs.CallTool(b.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
			Arguments: map[string]any{"content": fmt.Sprintf("- bench line %d", i), "file": "bench.md", "old_text": nil}})
		if err != nil || res.IsError {
			b.Fatalf("seed write %d: %v %v", i, err, res)
		}
	}
	if code, _, body := apiCall(b, client, "GET", files+"bench.md", "", nil); code != http.StatusOK || !strings.Contains(body, "bench line 99") {
		b.Fatalf("the API's read of the file MCP wrote: %d %q", code, body)
	}

	b.Run("api-create", func(b *testing.B) {
		benchOps(b, "µs", func(i int) error {
			return expect(apiCall(b, client, "PUT", fmt.Sprintf("%screate-%d.md", files, i), fmt.Sprintf("- bench line %d\n", i),
				http.Header{"If-None-Match": {"*"}, "Idempotency-Key": {fmt.Sprintf("create/%d", i)}}))(http.StatusCreated)
		})
	})
	b.Run("api-update", func(b *testing.B) {
		lines := make([]string, 100)
		for i := range lines {
			lines[i] = fmt.Sprintf("- bench line %d\n", i)
		}
		code, etag, body := apiCall(b, client, "PUT", files+"update.md", strings.Join(lines, ""), http.Header{"If-None-Match": {"*"}})
		if code != http.StatusCreated {
			b.Fatalf("create update.md: %d %q", code, body)
		}
		benchOps(b, "µs", func(i int) error {
			lines[i%len(lines)] = fmt.Sprintf("- bench line %d, updated\n", i)
			code, v, body := apiCall(b, client, "PUT", files+"update.md", strings.Join(lines, ""),
				http.Header{"If-Match": {etag}, "Idempotency-Key": {fmt.Sprintf("update/%d", i)}})
			etag = v
			return expect(code, v, body)(http.StatusOK)
		})
	})
	b.Run("api-read", func(b *testing.B) {
		benchOps(b, "µs", func(int) error { return expect(apiCall(b, client, "GET", files+"bench.md", "", nil))(http.StatusOK) })
	})
	b.Run("mcp-write", func(b *testing.B) {
		benchOps(b, "µs", func(i int) error {
			return toolCall(b, cs, &mcpsdk.CallToolParams{Name: "write_memory",
				Arguments: map[string]any{"content": fmt.Sprintf("- bench line %d", i), "file": fmt.Sprintf("mcp-%d.md", i/100), "old_text": nil},
				Meta:      mcpsdk.Meta{agentmemmcp.MetaIdempotencyKey: fmt.Sprintf("mcp/%d", i)}})
		})
	})
	b.Run("mcp-read", func(b *testing.B) {
		params := &mcpsdk.CallToolParams{Name: "read_memory", Arguments: map[string]any{"file": "bench.md"}}
		benchOps(b, "µs", func(int) error { return toolCall(b, cs, params) })
	})
}

// BenchmarkServeConsole measures the console's pages as `agentmem serve
// --transport http` serves them on SQLite, for a namespace of 1,000 files,
// signed in with an admin key: namespaces is the admin's home (every
// namespace with its file count and last change), notebook the
// namespace's page (its first 100 files, the snapshot preview and its
// budget), folder the listing of the namespace's main/ folder (its first
// 100 files, its 1,000 paths walked). Each
// op is one page view (GET, 200); it reports pages/s and the p50 and p99
// in ms.
func BenchmarkServeConsole(b *testing.B) {
	db := filepath.Join(b.TempDir(), "memory.db")
	s, err := store.Open(b.Context(), "sqlite:"+db, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		p := fmt.Sprintf("ana/main/notes-%04d.md", i)
		if i == 0 {
			p = "ana/main/MEMORY.md"
		}
		content := fmt.Sprintf("# Note %d\n\n- fact %d: prefers green tea\n- met on day %d\n", i, i, i%365)
		if _, err := s.Write(b.Context(), store.WriteRequest{Path: p, Content: content, Metadata: map[string]string{"updated_by": "ana", "client": "mcp"}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	keys := keyFileOf(b, "admin-key root admin")
	base := runServe(b, "--store", "sqlite:"+db, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp")
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(b.Context(), "POST", base+"/console/signin", strings.NewReader(url.Values{"key": {"admin-key"}}.Encode()))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "agentmem_session" && c.Value != "" {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil {
		b.Fatalf("sign-in: %d, cookies %v; want 303 with a session", resp.StatusCode, resp.Cookies())
	}
	page := func(path, want string) func(int) error {
		return func(int) error {
			req, err := http.NewRequestWithContext(b.Context(), "GET", base+path, nil)
			if err != nil {
				return err
			}
			req.AddCookie(session)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
				return fmt.Errorf("GET %s: %d, want 200 with %q: %.300q", path, resp.StatusCode, want, body)
			}
			return nil
		}
	}
	b.Run("namespaces-1000-files", func(b *testing.B) { benchOps(b, "ms", page("/console/", ">1000<")) })
	b.Run("notebook-1000-files", func(b *testing.B) { benchOps(b, "ms", page("/console/ns/ana/", "notes-0099.md")) })
	b.Run("folder-1000-files", func(b *testing.B) { benchOps(b, "ms", page("/console/ns/ana/tree/main", "notes-0098.md")) })
}

// apiCall sends one API request with the bench key and returns its
// status, ETag and body.
func apiCall(b *testing.B, client *http.Client, method, target, body string, h http.Header) (int, string, string) {
	req, err := http.NewRequestWithContext(b.Context(), method, target, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer bench-key")
	if body != "" {
		req.Header.Set("Content-Type", "text/markdown")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err.Error()
	}
	return resp.StatusCode, resp.Header.Get("ETag"), string(out)
}

// expect turns an API answer into an error unless its status is want.
func expect(code int, _ string, body string) func(want int) error {
	return func(want int) error {
		if code != want {
			return fmt.Errorf("status %d, want %d: %q", code, want, body)
		}
		return nil
	}
}

// toolCall makes one MCP tool call, an error unless it succeeds.
func toolCall(b *testing.B, cs *mcpsdk.ClientSession, p *mcpsdk.CallToolParams) error {
	res, err := cs.CallTool(b.Context(), p)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error %v", p.Name, res.Content)
	}
	return nil
}

// benchOps runs op b.N times, failing on the first error, and reports
// ops/s (calls/s, or pages/s for a unit of ms) and the p50 and p99 of one
// op in unit (µs or ms).
func benchOps(b *testing.B, unit string, op func(i int) error) {
	b.Helper()
	var durs []time.Duration
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		err := op(i)
		durs = append(durs, time.Since(t0))
		if err != nil {
			b.Fatalf("op %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	scale, rate := 1e3, "calls/s"
	if unit == "ms" {
		scale, rate = 1e6, "pages/s"
	}
	pct := func(q float64) float64 {
		return float64(durs[min(len(durs)-1, int(q*float64(len(durs))))].Nanoseconds()) / scale
	}
	b.ReportMetric(float64(len(durs))/elapsed.Seconds(), rate)
	b.ReportMetric(pct(0.50), "p50-"+unit)
	b.ReportMetric(pct(0.99), "p99-"+unit)
}
