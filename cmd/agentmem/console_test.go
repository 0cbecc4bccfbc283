package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleSignsInOnceWithTheLink: agentmem console prints a loopback
// link with a token; the first request with it answers a sign-in form
// posting the token to the console's sign-in, the link then answers 403;
// the token as a bearer key reaches every namespace as an admin, and
// writes record --user and the client "console"; nothing else is let in;
// a signal stops it with exit 0.
func TestConsoleSignsInOnceWithTheLink(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	var stdout, stderr syncBuffer
	cli := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, timeout: 30 * time.Second}
	done := make(chan int, 1)
	go func() { done <- cli.run(ctx, []string{"--store", "mem:", "console", "--user", "kamal"}) }()
	link := regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/console/\?token=([A-Z2-7]{26})\n$`)
	var m []string
	for deadline := time.Now().Add(20 * time.Second); m == nil; time.Sleep(5 * time.Millisecond) {
		m = link.FindStringSubmatch(stdout.String())
		if m == nil && time.Now().After(deadline) {
			t.Fatalf("no sign-in link on stdout: %q, stderr %q", stdout.String(), stderr.String())
		}
	}
	u, err := url.Parse(strings.TrimSpace(m[0]))
	if err != nil {
		t.Fatal(err)
	}
	base, token := "http://"+u.Host, m[1]
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(target string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", target, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	if r, _ := get(base + "/console/?token=WRONGWRONGWRONGWRONGWRONG2"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("a wrong token: %d, want 403", r.StatusCode)
	}
	r, page := get(base + "/console/?token=" + token)
	if r.StatusCode != http.StatusOK || !strings.Contains(page, `action="/console/signin"`) || !strings.Contains(page, `name="key" value="`+token+`"`) ||
		!strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") || r.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("the link: %d %v %q; want 200, a form posting the token to /console/signin, strict CSP, no referrer", r.StatusCode, r.Header, page)
	}
	if r, _ := get(base + "/console/?token=" + token); r.StatusCode != http.StatusForbidden {
		t.Fatalf("the link again: %d, want 403", r.StatusCode)
	}
	if r := do(t, "GET", base+"/api/v1/namespaces", token, ""); r.code != http.StatusOK {
		t.Fatalf("admin listing with the token as a bearer key: %d, want 200", r.code)
	}
	if r := do(t, "GET", base+"/console/api/v1/namespaces", token, ""); r.code != http.StatusOK {
		t.Fatalf("the console handler under /console/: %d, want 200", r.code)
	}
	if r := do(t, "GET", base+"/api/v1/namespaces", "", ""); r.code != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", r.code)
	}
	w := do(t, "PUT", base+"/api/v1/namespaces/ana/files/main/MEMORY.md", token, "- from the console\n")
	if w.code != http.StatusCreated {
		t.Fatalf("write with the token as a bearer key: %d %q, want 201", w.code, w.body)
	}
	if w := do(t, "PUT", base+"/api/v1/namespaces/ana/files/main/x.md", "not-the-token", "- x\n"); w.code != http.StatusUnauthorized {
		t.Fatalf("write with another bearer key: %d, want 401", w.code)
	}
	h := do(t, "GET", base+"/api/v1/namespaces/ana/history/main/MEMORY.md", token, "")
	if h.code != http.StatusOK || !strings.Contains(h.body, `"kamal"`) || !strings.Contains(h.body, `"console"`) {
		t.Fatalf("history: %d %q; want the change recorded by kamal through the console", h.code, h.body)
	}

	stop()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("console exited %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("console did not stop")
	}
}

// TestConsoleListensOnLoopbackOnly: --listen must be a loopback address.
func TestConsoleListensOnLoopbackOnly(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80", "example.com:80", "nonsense"} {
		var errOut syncBuffer
		cli := &app{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &errOut, timeout: 30 * time.Second}
		if code := cli.run(t.Context(), []string{"--store", "mem:", "console", "--listen", listen}); code != exitUsage || !strings.Contains(errOut.String(), "--listen") {
			t.Errorf("--listen %q: exit %d, %q; want %d naming --listen", listen, code, errOut.String(), exitUsage)
		}
	}
}
