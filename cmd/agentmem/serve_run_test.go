package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// keyFileOf writes a key file for serve --keys: each line "KEY USER
// [ROLE]" becomes "sha256:<hash of KEY> USER [ROLE]".
func keyFileOf(tb testing.TB, lines ...string) string {
	tb.Helper()
	var b strings.Builder
	for _, l := range lines {
		key, rest, _ := strings.Cut(l, " ")
		b.WriteString(agentmemmcp.HashKey(key) + " " + rest + "\n")
	}
	path := filepath.Join(tb.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// serveAddr is the line serve logs once it listens.
var serveAddr = regexp.MustCompile(`serving MCP on (http://[0-9.:]+)/`)

// runServe runs `agentmem <args>` (a serve --transport http) in this
// process until tb ends, as startServe does for tests and benchmarks
// alike, and returns its base URL (http://host:port).
func runServe(tb testing.TB, args ...string) string {
	tb.Helper()
	ctx, stop := context.WithCancel(tb.Context())
	var stderr syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &stderr, timeout: 30 * time.Second}
	done := make(chan int, 1)
	go func() { done <- cli.run(ctx, args) }()
	tb.Cleanup(func() {
		stop()
		if code := <-done; code != exitOK {
			tb.Errorf("serve exited %d: %s", code, stderr.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := serveAddr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			done <- code
			tb.Fatalf("serve exited %d before serving: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("serve did not start: %s", stderr.String())
		}
	}
}
