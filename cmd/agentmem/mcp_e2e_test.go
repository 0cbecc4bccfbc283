package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmem/agentmem/mcp/oauthtest"
)

// TestMCPClientEndToEnd drives `agentmem serve` with a client nobody here
// wrote: the official MCP TypeScript SDK (scripts/mcp-client, pinned by its
// package-lock.json and installed with npm ci into .cache/mcp-client). Over
// HTTP two users with their own API keys write, read, search, delete, read
// resources and hear change notifications, never seeing each other's files;
// a wrong key gets 401; SIGTERM stops the server with exit code 0. With
// OAuth (an in-process test issuer) a fourth user does the same with a JWT,
// and tokens for another audience or with a bad signature get 401. Over
// stdio a third user does the same on the same store. It needs node and
// npm, and fails (never skips) without them.
func TestMCPClientEndToEnd(t *testing.T) {
	t.Parallel() // mostly waiting on node
	root := repoRoot(t)
	modules := installMCPClient(t, root)
	dir := t.TempDir()
	script := filepath.Join(dir, "e2e.mjs")
	src, err := os.ReadFile(filepath.Join(root, "scripts", "mcp-client", "e2e.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	// Node resolves the SDK from the script's directory upward.
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "agentmem")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	storeURL := "sqlite:" + filepath.Join(dir, "memory.db")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	t.Run("http", func(t *testing.T) {
		keyA, lineA := keygen(t, bin, "alice@example.com")
		keyB, lineB := keygen(t, bin, "bob")
		keys := filepath.Join(dir, "keys")
		if err := os.WriteFile(keys, []byte("# test keys\n"+lineA+"\n"+lineB+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		srv := exec.Command(bin, "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--keys", keys, "--store", storeURL)
		addr, logs, done := startServer(t, srv)
		url := "http://" + addr + "/"

		a := runClient(ctx, t, script, nil, "http", "alice", url, keyA)
		if a["server"].(map[string]any)["name"] != "agentmem" {
			t.Errorf("server = %v", a["server"])
		}
		runClient(ctx, t, script, []string{"AGENTMEM_E2E_ABSENT=alice"}, "http", "bob", url, keyB)
		runClient(ctx, t, script, []string{"AGENTMEM_E2E_ABSENT=bob"}, "http", "alice-again", url, keyA)
		for _, wrong := range []string{strings.Repeat("0", 64), keyA + "x"} {
			if out := runClient(ctx, t, script, nil, "unauthorized", url, wrong); out["status"] != float64(401) {
				t.Errorf("a wrong key got %v, want 401", out["status"])
			}
		}

		terminate(ctx, t, srv, done, logs)
		if !strings.Contains(logs(), "shutting down") {
			t.Errorf("serve logs lack the shutdown:\n%s", logs())
		}
	})

	t.Run("oauth", func(t *testing.T) {
		// An in-process issuer; the binary discovers its JWKS from its
		// metadata. The audience is the canonical URL clients are told,
		// which need not be the listening address.
		is, err := oauthtest.NewIssuer()
		if err != nil {
			t.Fatal(err)
		}
		defer is.Close()
		const aud = "https://memory.example.test/mcp"
		srv := exec.Command(bin, "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--store", storeURL,
			"--oauth-issuer", is.URL(), "--oauth-audience", aud)
		addr, logs, done := startServer(t, srv)
		url := "http://" + addr + "/"
		tokenFor := func(user, audience string) string {
			tok, err := is.Token("ES256", is.Claims(user, audience))
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		runClient(ctx, t, script, []string{"AGENTMEM_E2E_ABSENT=alice,bob"}, "http", "dave", url, tokenFor("dave", aud))
		// Another audience's token, and a forged one: 401.
		forged, err := is.Forge("RS256", is.Claims("dave", aud))
		if err != nil {
			t.Fatal(err)
		}
		for _, wrong := range []string{tokenFor("dave", "https://other.example.test/mcp"), forged} {
			if out := runClient(ctx, t, script, nil, "unauthorized", url, wrong); out["status"] != float64(401) {
				t.Errorf("a bad token got %v, want 401", out["status"])
			}
		}
		resp, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || meta.Resource != aud || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != is.URL() {
			t.Errorf("protected resource metadata: %+v, %v", meta, err)
		}
		terminate(ctx, t, srv, done, logs)
	})

	t.Run("stdio", func(t *testing.T) {
		out := runClient(ctx, t, script, []string{"AGENTMEM_E2E_ABSENT=alice,bob"}, "stdio", "carol", "--",
			bin, "serve", "--transport", "stdio", "--user", "carol", "--store", storeURL)
		if out["notification"] != "memory:///carol.md" {
			t.Errorf("notification = %v", out["notification"])
		}
	})
}

// repoRoot is the directory of go.work above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the working directory: run the test inside the agentmem repository")
		}
		dir = parent
	}
}

// mcpClientInstall serializes installs of the client within this process.
var mcpClientInstall sync.Mutex

// installMCPClient returns the node_modules of the pinned MCP client in
// ROOT/.cache/mcp-client, running npm ci there first (into a temporary
// directory renamed into place) unless the installed package files are the
// ones in scripts/mcp-client.
func installMCPClient(t *testing.T, root string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found on PATH: this test runs the official MCP TypeScript SDK client and needs Node.js 20+ and npm (apt-get install -y nodejs npm)", tool)
		}
	}
	mcpClientInstall.Lock()
	defer mcpClientInstall.Unlock()
	src := filepath.Join(root, "scripts", "mcp-client")
	cache := filepath.Join(root, ".cache")
	dst := filepath.Join(cache, "mcp-client")
	installed := true
	for _, f := range []string{"package.json", "package-lock.json"} {
		want, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join(dst, f))
		installed = installed && err == nil && bytes.Equal(have, want)
	}
	if _, err := os.Stat(filepath.Join(dst, ".installed")); err != nil {
		installed = false
	}
	if installed {
		return filepath.Join(dst, "node_modules")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, "mcp-client.tmp.")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("npm ci (@modelcontextprotocol/sdk, pinned in scripts/mcp-client) into %s", dst)
	npm := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	npm.Dir = tmp
	npm.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(cache, "mcp-client-npm"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	if out, err := npm.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s failed (network, or a registry mirror in npm_config_registry?): %v\n%s", tmp, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "node_modules")
}

// terminate sends SIGTERM to a server started by startServer and waits
// for it to exit with status 0.
func terminate(ctx context.Context, t *testing.T, srv *exec.Cmd, done <-chan error, logs func() string) {
	t.Helper()
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", err, logs())
		}
	case <-ctx.Done():
		t.Fatalf("serve did not stop after SIGTERM\n%s", logs())
	}
}

// keygen makes an API key for user with `agentmem serve keygen`.
func keygen(t *testing.T, bin, user string) (key, line string) {
	t.Helper()
	out, err := exec.Command(bin, "serve", "keygen", "--user", user).Output()
	if err != nil {
		t.Fatalf("serve keygen: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[1], " "+user) {
		t.Fatalf("serve keygen printed %q, want a key and a key file line", out)
	}
	return lines[0], lines[1]
}

// listening is the line serve logs once it accepts connections.
var listening = regexp.MustCompile(`serving MCP on http://([0-9.:]+)/`)

// startServer starts cmd and waits, at most a minute, for it to log its
// address. It returns the address, the logs so far, and the channel of
// the process's exit; the process is killed at the end of the test if
// still running.
func startServer(t *testing.T, cmd *exec.Cmd) (addr string, logs func() string, done <-chan error) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var buf strings.Builder
	logs = func() string { mu.Lock(); defer mu.Unlock(); return buf.String() }
	found := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			buf.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	exited := make(chan error, 1)
	go func() {
		<-read // Wait must follow the last read of the pipe.
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	select {
	case addr = <-found:
	case err := <-exited:
		t.Fatalf("serve exited before listening: %v\n%s", err, logs())
	case <-time.After(time.Minute):
		t.Fatalf("serve did not log its address within a minute\n%s", logs())
	}
	return addr, logs, exited
}

// runClient runs e2e.mjs with args and returns the JSON object it prints.
func runClient(ctx context.Context, t *testing.T, script string, env []string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = errors.Join(err, fmt.Errorf("the test's deadline passed: %w", ctxErr))
	}
	if err != nil {
		t.Fatalf("node e2e.mjs %s: %v\nstdout:\n%s\nstderr:\n%s", args[0], err, &stdout, &stderr)
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node e2e.mjs %s printed no JSON object: %v\n%s", args[0], err, &stdout)
	}
	t.Logf("e2e.mjs %s %s: %s", args[0], args[1], strings.TrimSpace(stdout.String()))
	return out
}
