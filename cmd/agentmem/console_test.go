package main

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleSignsInOnceWithTheLink: agentmem console prints a loopback
// link with a token; the first request with it signs in (an HttpOnly,
// SameSite=Strict cookie and a redirect without the token), the link then
// signs in no more; the cookie and the token as a bearer key reach every
// namespace as an admin, and writes record --user and the client
// "console"; nothing else is let in; a signal stops it with exit 0.
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
	get := func(target, cookie string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", target, nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	if r := get(base+"/console/?token=WRONGWRONGWRONGWRONGWRONG2", ""); r.StatusCode != http.StatusForbidden || len(r.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v; want 403 and none", r.StatusCode, r.Cookies())
	}
	r := get(base+"/console/?token="+token+"&ns=ana", "")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/console/?ns=ana" || len(r.Cookies()) != 1 {
		t.Fatalf("the link: %d, Location %q, cookies %v; want 303 to /console/?ns=ana with one cookie", r.StatusCode, r.Header.Get("Location"), r.Cookies())
	}
	c := r.Cookies()[0]
	if c.Name != ConsoleCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value == "" || c.Value == token {
		t.Fatalf("session cookie %+v: want %s, HttpOnly, SameSite=Strict, not the token", c, ConsoleCookie)
	}
	if r := get(base+"/console/?token="+token, ""); r.StatusCode != http.StatusForbidden || len(r.Cookies()) != 0 {
		t.Fatalf("the link again: %d, cookies %v; want 403 and no session", r.StatusCode, r.Cookies())
	}
	session := c.Name + "=" + c.Value
	if r := get(base+"/api/v1/namespaces", session); r.StatusCode != http.StatusOK {
		t.Fatalf("admin listing with the session: %d, want 200", r.StatusCode)
	}
	for _, cookie := range []string{"", ConsoleCookie + "=made-up"} {
		if r := get(base+"/api/v1/namespaces", cookie); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("cookie %q: %d, want 401", cookie, r.StatusCode)
		}
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
