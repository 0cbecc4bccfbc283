package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// TestBrowserServeKeyChanges: console sessions follow serve's key file.
// A key removed from it ends its sessions (the next page is the sign-in
// page, the open editor's save writes nothing); an admin key demoted to a
// user's loses other namespaces and the admin pages at once, as its API
// calls do (console/browsertest/sessions.mjs).
func TestBrowserServeKeyChanges(t *testing.T) {
	t.Parallel()
	node, dir := browserPrereqs(t)
	storeURL := "sqlite:" + filepath.Join(t.TempDir(), "memory.db") + "?history=on"
	s, err := store.Open(t.Context(), storeURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range map[string]string{"bob/main/MEMORY.md": "- bob's note\n", "alice/main/MEMORY.md": "- alice's note\n"} {
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: p, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	lines := []string{"admin-key root admin", "bob-key bob", "ops-key ops admin"}
	keys := keyFileOf(t, lines...)
	contentOf := func(lines ...string) string {
		b, err := os.ReadFile(keyFileOf(t, lines...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := runServe(t, "--store", storeURL, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp")

	rctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	runFlows(t, rctx, node, dir, "sessions.mjs", append(os.Environ(), "CONSOLE_URL="+base+"/console/", "API_URL="+base, "KEYS_FILE="+keys,
		"KEYS_REVOKED="+contentOf(lines[0], lines[2]), "KEYS_DEMOTED="+contentOf(lines[0], "ops-key ops"),
		"SHOTS_DIR="+t.TempDir(), "CHROMIUM="+chromiumPath), []string{"a revoked key's session ends", "a demoted admin's session narrows"})
	if r := do(t, "GET", base+"/api/v1/namespaces/bob/files/main/MEMORY.md", "admin-key", ""); !strings.Contains(r.body, `"content":"- bob's note\n"`) {
		t.Errorf("bob's file after the flows: %d %s", r.code, r.body)
	}
}

// TestServePublicURLMarksCookieSecure: behind the TLS proxy docs/deploy.md
// recommends serve sees plain HTTP; --public-url https://… marks the
// console's session cookie Secure all the same. Without it (or with an
// http:// one), plain loopback HTTP gets a cookie without Secure; a URL
// that is not one is a usage error naming the flag.
func TestServePublicURLMarksCookieSecure(t *testing.T) {
	keys := keyFileOf(t, "ana-key ana")
	for _, c := range []struct {
		public string
		secure bool
	}{{"https://memory.example.test", true}, {"https://memory.example.test/", true}, {"http://memory.example.test", false}, {"", false}} {
		args := []string{"--store", "mem:", "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0"}
		if c.public != "" {
			args = append(args, "--public-url", c.public)
		}
		base := runServe(t, args...)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.PostForm(base+"/console/signin", url.Values{"key": {"ana-key"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		cs := resp.Cookies()
		if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || cs[0].Secure != c.secure || !cs[0].HttpOnly {
			t.Errorf("--public-url %q: sign-in %d, cookies %v; want one HttpOnly session cookie, Secure %v", c.public, resp.StatusCode, cs, c.secure)
		}
	}
	for _, bad := range []string{"memory.example.test", "ftp://memory.example.test", "https://", "https://u:p@memory.example.test", "https://memory.example.test/?x=1"} {
		var errOut syncBuffer
		cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &errOut, timeout: 30 * time.Second}
		if code := cli.run(t.Context(), []string{"--store", "mem:", "serve", "--transport", "http", "--keys", keys, "--public-url", bad}); code != exitUsage || !strings.Contains(errOut.String(), "--public-url") {
			t.Errorf("--public-url %q: exit %d, %q; want %d naming --public-url", bad, code, errOut.String(), exitUsage)
		}
	}
	var errOut syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &errOut, timeout: 30 * time.Second}
	if code := cli.run(t.Context(), []string{"--store", "mem:", "serve", "--user", "ana", "--public-url", "https://memory.example.test"}); code != exitUsage {
		t.Errorf("stdio with --public-url: exit %d, %q; want %d", code, errOut.String(), exitUsage)
	}
}
