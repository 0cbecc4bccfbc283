package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// markdownNoteFile, in browsertest/, is a note built to run something
// once rendered (a script, an image's onerror, javascript: links in three
// spellings) beside what a note is for; the flows open it as
// mallory/main/links.md.
const markdownNoteFile = "markdown-note.md"

// chromiumPath is Debian's Chromium, the only browser the tests drive:
// playwright-core never downloads one.
const chromiumPath = "/usr/bin/chromium"

// browserPrereqs fails (never skips) when the browser or the driver is
// missing, saying how to install them.
func browserPrereqs(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs("browsertest")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if _, err := os.Stat(chromiumPath); err != nil {
		missing = append(missing, chromiumPath+" (apt-get install -y chromium)")
	}
	node, err = exec.LookPath("node")
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

// TestBrowserFlows drives the console in headless Chromium: sign in,
// browse, edit with a conflicting API write while the editor is open,
// create and delete (behind its confirmation page; the notice shows once
// and never from the URL), a delete undone from the notice's link,
// search, history and diff, a double-submitted restore, stored markup rendered inert (a dialog fails the run), a
// note rendered as Markdown with its script, onerror image and javascript: links inert (its raw view and editor
// one click away), a
// cross-origin POST refused, expired and unknown sessions sent to sign-in,
// a user key with JavaScript off, forget behind a typed confirmation, the
// export download and its import upload, a consolidation previewed and
// applied with a scripted model (JavaScript off), and the main pages on a
// 390 px phone (no sideways scrolling, the namespaces' links in their row,
// the favicon), and the conflict view's three-way merge: edits apart
// merged and saved, a third writer meeting the merge's save, overlaps
// shown side by side, a merge saved with its markers refused (merge.mjs);
// then the flows of what history tells (activity.mjs) and of a file's
// lifetime (lifetime.mjs).
// One browser launch serves every flow (flows.mjs).
//
// The screenshots go to a temporary folder; AGENTMEM_CONSOLE_SCREENSHOTS=../docs
// writes the ones docs/ and the README show.
func TestBrowserFlows(t *testing.T) {
	node, dir := browserPrereqs(t)
	ctx := t.Context()
	fd, err := filestore.New(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(fd, &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	model := &scriptedModel{answers: []string{consolidateAnswer}}
	e := newEnvOn(t, s, &Options{Consolidator: pruned.ModelFunc(model.generate)})
	e.h.observe = nil // the pages' API calls are not the handler tests' status census

	seedAs := func(p, content, who string) string {
		m, err := s.Write(ctx, store.WriteRequest{Path: p, Content: content, Metadata: map[string]string{UpdatedByKey: who, ClientKey: "mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		return m.Version
	}
	seedAs("alice/main/MEMORY.md", "- likes tea\n", "alice")
	v, _ := s.Read(ctx, "alice/main/MEMORY.md", 100)
	if _, err := s.Write(ctx, store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- lives in Hanoi\n- prefers green tea\n", Expected: v.Version,
		Metadata: map[string]string{UpdatedByKey: "alice", ClientKey: "mcp"}}); err != nil {
		t.Fatal(err)
	}
	seedAs("alice/main/projects.md", "# Projects\n\n- agentmem console: pages and browser tests\n- tea tasting notes\n", "alice")
	evil := `<script>window.__pwned=1;alert(1)</script><img src=x onerror="alert(2)"><b class="pwned" data-pwned>pwned</b>`
	m, err := s.Write(ctx, store.WriteRequest{Path: "mallory/main/evil.md", Content: evil + "\n",
		Metadata: map[string]string{UpdatedByKey: evil, "note": evil}})
	if err != nil {
		t.Fatal(err)
	}
	note, err := os.ReadFile(filepath.Join(dir, markdownNoteFile))
	if err != nil {
		t.Fatal(err)
	}
	seedAs("mallory/main/links.md", string(note), "mallory")
	seedAs("bob/main/MEMORY.md", "- bob's note\n", "bob")
	seedAs("carol/main/MEMORY.md", "- lives in Hanoi\n", "carol")
	seedAs("carol/main/pruned.md", consolidatePruned, "carol")

	srv := httptest.NewServer(e.h)
	defer srv.Close()
	// Another origin (localhost, not 127.0.0.1): its form posts a delete
	// to the console.
	evilSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/ns/alice/delete"><input type="hidden" name="path" value="main/MEMORY.md">`+
			`<input type="hidden" name="version" value="x"><input type="hidden" name="token" value="evil"><button>win a prize</button></form>`, srv.URL)
	}))
	defer evilSrv.Close()
	evilURL := strings.Replace(evilSrv.URL, "127.0.0.1", "localhost", 1)

	// A session the test expires.
	sid, _ := e.h.sessions.create(Principal{User: "alice", Client: "console"}, "alice-key")
	e.h.sessions.mu.Lock()
	e.h.sessions.m[sid].expires = time.Now().Add(-time.Minute)
	e.h.sessions.mu.Unlock()

	shots := os.Getenv("AGENTMEM_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shots, _ = filepath.Abs(shots)

	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	env := append(os.Environ(), "CONSOLE_URL="+srv.URL, "EVIL_URL="+evilURL, "EXPIRED_SID="+sid,
		"EVIL_VERSION="+m.Version, "SHOTS_DIR="+shots, "CHROMIUM="+chromiumPath)
	runFlows(t, rctx, node, dir, "flows.mjs", env, []string{"sign in", "browse", "edit with a conflicting API write", "create and delete", "search", "history and diff",
		"undo a delete", "restore, double submitted", "stored markup renders inert", "a note renders as Markdown, inert", "cross-origin POST refused", "expired and unknown sessions go to sign-in",
		"user key, JavaScript off", "forget behind a typed confirmation", "export download", "import upload", "consolidate, JavaScript off", "narrow viewport",
		"merge, edits apart", "merge, overlapping edits show both sides", "merge, JavaScript off", "merge on a narrow viewport"})
	runFlows(t, rctx, node, dir, "activity.mjs", env, historyFlows)
	runFlows(t, rctx, node, dir, "lifetime.mjs", env, lifetimeFlows)
	// What the flows did, as the store saw it.
	if _, err := s.Read(ctx, "bob/main/MEMORY.md", 10); err == nil {
		t.Error("bob's namespace survived its forget")
	}
	f, err := s.Read(ctx, "alice/main/MEMORY.md", 1000)
	if err != nil || f.Content != "- edited without JavaScript\n" || f.Metadata[ClientKey] != "console" {
		t.Errorf("alice's MEMORY.md after the flows: %+v %v", f, err)
	}
}

// historyFlows are the flows browsertest/activity.mjs reports "ok" for:
// the deleted view with its restore, the activity and the namespaces'
// sizes (issue 38).
var historyFlows = []string{"delete then restore from the deleted view", "activity counts equal the history",
	"namespaces show size, tokens and last activity", "deleted and activity on a phone"}

// lifetimeFlows are the flows browsertest/lifetime.mjs reports "ok" for:
// a file's expiry and pin set through its page, marked in the listings and
// what the model sees, and an expired file restored (issue 39).
var lifetimeFlows = []string{"pin and expire through the file page, JavaScript off", "an expired file's history and restore", "lifetime on a phone"}

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
