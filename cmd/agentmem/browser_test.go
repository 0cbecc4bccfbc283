package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/store"
)

// chromiumPath is Debian's Chromium, the only browser the browser tests
// drive (as console's own): playwright-core never downloads one.
const chromiumPath = "/usr/bin/chromium"

// browserFlows are the flows console/browsertest/flows.mjs reports "ok"
// for (the merge's, from merge.mjs, last), each of which must pass.
var browserFlows = []string{"sign in", "browse", "edit with a conflicting API write", "create and delete", "search", "history and diff",
	"restore, double submitted", "stored markup renders inert", "a note renders as Markdown, inert", "cross-origin POST refused", "expired and unknown sessions go to sign-in",
	"user key, JavaScript off", "forget behind a typed confirmation", "export download", "import upload", "undo a delete", "narrow viewport",
	"merge, edits apart", "merge, overlapping edits show both sides", "merge, JavaScript off", "merge on a narrow viewport"}

// historyFlows are the flows console/browsertest/activity.mjs reports
// "ok" for, each of which must pass.
var historyFlows = []string{"delete then restore from the deleted view", "activity counts equal the history",
	"namespaces show size, tokens and last activity", "deleted and activity on a phone"}

// TestBrowserServeSQLite runs the console's browser flows against
// `agentmem serve --transport http` on a SQLite store.
func TestBrowserServeSQLite(t *testing.T) {
	t.Parallel() // mostly waiting on chromium
	browserServe(t, "sqlite:"+filepath.Join(t.TempDir(), "memory.db")+"?history=on")
}

// TestBrowserServePostgres runs the console's browser flows against
// `agentmem serve --transport http` on a PostgreSQL store (testenv's).
func TestBrowserServePostgres(t *testing.T) {
	t.Parallel()
	browserServe(t, browserPostgres(t, "browser"))
}

// browserPostgres is the URL of a fresh PostgreSQL store on testenv's
// server, with history on, dropped when t ends.
func browserPostgres(t *testing.T, name string) string {
	pg := emulator.Require(t, emulator.PostgresURL)
	u, err := postgresURL(pg, unique(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropPostgres(u) })
	return u + "&history=on"
}

// browserPrereqs is the browser test driver's folder and node, failing
// (never skipping) with how to install what is missing.
func browserPrereqs(t *testing.T) (node, dir string) {
	t.Helper()
	dir = filepath.Join(repoRoot(t), "console", "browsertest")
	var missing []string
	if _, err := os.Stat(chromiumPath); err != nil {
		missing = append(missing, chromiumPath+" (apt-get install -y chromium)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node >= 20 (apt-get install -y nodejs npm)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (cd console/browsertest && npm ci)")
	}
	if len(missing) > 0 {
		t.Fatalf("the browser tests need %s; make test installs them", strings.Join(missing, ", "))
	}
	return node, dir
}

// browserServe seeds the store at storeURL as console's TestBrowserFlows
// seeds its own (alice's two files, the second with two versions, a file
// of mallory's whose content and metadata are markup, bob's file), starts
// `agentmem serve --transport http` on it with an admin key (user root)
// and a user key (alice), and runs console/browsertest/flows.mjs in
// headless Chromium (one launch) against the console at /console/ and
// the API at /api/v1/ on the same listener. serve sets no session
// lifetime, so the flow's expired session is one that was signed out;
// console's own test covers one past its expiry.
func browserServe(t *testing.T, storeURL string) {
	node, dir := browserPrereqs(t)
	ctx := t.Context()
	evilVersion := seedBrowser(t, storeURL)

	keys := keyFileOf(t, "admin-key root admin", "alice-key alice")
	base := runServe(t, "--store", storeURL, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp",
		"--model", "script:"+browserModel(t))
	ended := endedSession(t, base+"/console")

	// Another origin (localhost, not 127.0.0.1): its form posts a delete
	// to the console.
	evilSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/console/ns/alice/delete"><input type="hidden" name="path" value="main/MEMORY.md">`+
			`<input type="hidden" name="version" value="x"><input type="hidden" name="token" value="evil"><button>win a prize</button></form>`, base)
	}))
	defer evilSrv.Close()
	evilURL := strings.Replace(evilSrv.URL, "127.0.0.1", "localhost", 1)

	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	env := append(os.Environ(), "CONSOLE_URL="+base+"/console/", "API_URL="+base, "EVIL_URL="+evilURL, "EXPIRED_SID="+ended,
		"EVIL_VERSION="+evilVersion, "SHOTS_DIR="+t.TempDir(), "CHROMIUM="+chromiumPath)
	// flows.mjs, then the flows of what history tells (activity.mjs: the
	// deleted view, the activity) on what it left.
	runFlows(t, rctx, node, dir, "flows.mjs", env, browserFlows)
	runFlows(t, rctx, node, dir, "activity.mjs", env, historyFlows)
	// What the flows did, as serve's API reports it.
	if r := do(t, "GET", base+"/api/v1/namespaces/bob/files/main/MEMORY.md", "admin-key", ""); r.code != http.StatusNotFound {
		t.Errorf("bob's MEMORY.md after its namespace was forgotten: %d %q, want 404", r.code, r.body)
	}
	r := do(t, "GET", base+"/api/v1/namespaces/alice/files/main/MEMORY.md", "alice-key", "")
	var f console.FileJSON
	if err := json.Unmarshal([]byte(r.body), &f); r.code != http.StatusOK || err != nil ||
		f.Content != "- edited without JavaScript\n" || f.Metadata[console.ClientKey] != "console" || f.Metadata[console.UpdatedByKey] != "alice" {
		t.Errorf("alice's MEMORY.md after the flows: %d %q; want the edit alice made without JavaScript, by the console", r.code, r.body)
	}
}

// seedBrowser writes, straight into the store (as an agent's MCP writes
// would have left it), what the flows expect to find, and returns the
// version of mallory's file.
func seedBrowser(t *testing.T, storeURL string) (evilVersion string) {
	t.Helper()
	ctx := t.Context()
	s, err := store.Open(ctx, storeURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	by := func(who string) map[string]string {
		return map[string]string{console.UpdatedByKey: who, console.ClientKey: "mcp"}
	}
	write := func(p, content, expected string, md map[string]string) string {
		m, err := s.Write(ctx, store.WriteRequest{Path: p, Content: content, Expected: expected, Metadata: md})
		if err != nil {
			t.Fatalf("seed %s: %v", p, err)
		}
		return m.Version
	}
	v := write("alice/main/MEMORY.md", "- likes tea\n", "", by("alice"))
	write("alice/main/MEMORY.md", "- lives in Hanoi\n- prefers green tea\n", v, by("alice"))
	write("alice/main/projects.md", "# Projects\n\n- agentmem console: pages and browser tests\n- tea tasting notes\n", "", by("alice"))
	evil := `<script>window.__pwned=1;alert(1)</script><img src=x onerror="alert(2)"><b class="pwned" data-pwned>pwned</b>`
	evilVersion = write("mallory/main/evil.md", evil+"\n", "", map[string]string{console.UpdatedByKey: evil, "note": evil})
	note, err := os.ReadFile(filepath.Join(repoRoot(t), "console", "browsertest", "markdown-note.md"))
	if err != nil {
		t.Fatal(err)
	}
	write("mallory/main/links.md", string(note), "", by("mallory"))
	write("bob/main/MEMORY.md", "- bob's note\n", "", by("bob"))
	// What the consolidation flow consolidates (the answers: browserModel).
	write("carol/main/MEMORY.md", "- lives in Hanoi\n", "", by("carol"))
	write("carol/main/pruned.md", "- user (2025-06-01T09:00:00Z): I moved from Hanoi to Da Nang last month.\n"+
		"- user (2025-06-01T09:01:00Z): Book me a window seat, always.\n", "", by("carol"))
	return evilVersion
}

// runFlows runs the browser test script in dir with env and fails unless
// each of flows reports ok.
func runFlows(t *testing.T, ctx context.Context, node, dir, script string, env, flows []string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script))
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, out)
	if err != nil {
		t.Fatalf("the browser flows of %s failed (%v); see the output above", script, err)
	}
	for _, flow := range flows {
		if !strings.Contains(string(out), "ok "+flow+"\n") {
			t.Errorf("flow %q did not report ok", flow)
		}
	}
}

// endedSession signs in to the console at consoleURL with alice's key,
// signs out, and returns the id of the session that ended: a cookie the
// console must send to sign-in.
func endedSession(t *testing.T, consoleURL string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values, cookie *http.Cookie) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "POST", consoleURL+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := post("/signin", url.Values{"key": {"alice-key"}}, nil)
	var sc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "agentmem_session" && c.Value != "" {
			sc = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || sc == nil {
		t.Fatalf("sign-in with alice's key: %d, cookies %v; want 303 with a session cookie", resp.StatusCode, resp.Cookies())
	}
	if resp := post("/signout", nil, sc); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d, want 303", resp.StatusCode)
	}
	return sc.Value
}

// browserModel writes the answers of the scripted model behind the
// console's "Consolidate now" (serve --model script:FILE): the flow's
// preview and its apply each ask once; the same edits both times.
func browserModel(t *testing.T) string {
	t.Helper()
	edits := `{"edits":[{"file":null,"old_text":"- lives in Hanoi","content":"- lives in Da Nang (moved 2025-05)"},` +
		`{"file":"MEMORY.md","old_text":null,"content":"- prefers window seats; see travel.md"},` +
		`{"file":"travel.md","old_text":null,"content":"# Travel\n- window seat, always"}]}`
	answer := `{"model":"scripted-1","text":` + strconv.Quote(edits) + `}`
	file := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(file, []byte("["+strings.Repeat(answer+",", 3)+answer+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
