package console

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// pageReq is one request to the pages: a session cookie and a form.
type pageReq struct {
	method, target, cookie string
	form                   url.Values
	headers                []string
}

func (e *env) page(r pageReq) *httptest.ResponseRecorder {
	e.t.Helper()
	var hr *http.Request
	if r.form != nil {
		hr = httptest.NewRequestWithContext(e.t.Context(), r.method, r.target, strings.NewReader(r.form.Encode()))
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		hr = httptest.NewRequestWithContext(e.t.Context(), r.method, r.target, nil)
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: sessionCookie, Value: r.cookie})
	}
	for _, h := range r.headers {
		k, v, _ := strings.Cut(h, ": ")
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, hr)
	return w
}

// signIn signs in with key and returns the session cookie's value.
func (e *env) signIn(key string) string {
	e.t.Helper()
	w := e.page(pageReq{method: "POST", target: "/signin", form: url.Values{"key": {key}}})
	if w.Code != http.StatusSeeOther {
		e.t.Fatalf("sign in: %d %s", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie {
			return c.Value
		}
	}
	e.t.Fatal("sign in set no session cookie")
	return ""
}

func (e *env) seed(p, content string) string {
	e.t.Helper()
	m, err := e.s.Write(e.t.Context(), store.WriteRequest{Path: p, Content: content, Metadata: map[string]string{UpdatedByKey: "agent"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Version
}

func (e *env) history(req store.HistoryRequest) store.HistoryPage {
	e.t.Helper()
	req.Limit = 100
	page, err := e.s.History(e.t.Context(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	return page
}

// hidden is the value of the hidden input name in a page.
func hidden(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no hidden %s in %s", name, body)
	}
	return m[1]
}

func wantStatus(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
}

func TestPagesSignInSessionAndSignOut(t *testing.T) {
	e := newEnv(t)
	w := e.page(pageReq{method: "GET", target: "/ns/alice/"})
	wantStatus(t, w, http.StatusSeeOther)
	if loc := w.Header().Get("Location"); !strings.HasPrefix(loc, "/signin") {
		t.Fatalf("no session: Location %q, want the sign-in page", loc)
	}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/signin", form: url.Values{"key": {"nope"}}}), http.StatusUnauthorized)

	w = e.page(pageReq{method: "POST", target: "/signin", form: url.Values{"key": {"alice-key"}}})
	wantStatus(t, w, http.StatusSeeOther)
	ck := w.Result().Cookies()[0]
	if ck.Name != sessionCookie || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || len(ck.Value) < 40 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure without TLS, a long random id", ck)
	}
	if ck.Value == "alice-key" || strings.Contains(w.Header().Get("Set-Cookie"), "alice-key") {
		t.Fatal("the cookie holds the key")
	}
	w = e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ck.Value})
	wantStatus(t, w, http.StatusOK)
	for h, want := range map[string]string{"Content-Security-Policy": contentSecurityPolicy, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if !strings.Contains(contentSecurityPolicy, "frame-ancestors 'none'") || strings.Contains(contentSecurityPolicy, "unsafe-inline") {
		t.Fatal("the CSP must forbid framing and inline script")
	}

	// Unknown session: sign-in.
	w = e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: "made-up"})
	wantStatus(t, w, http.StatusSeeOther)
	if loc := w.Header().Get("Location"); loc != "/signin?expired=1" {
		t.Fatalf("unknown session: Location %q", loc)
	}
	// Expired session: sign-in, and the session is gone for good.
	e.h.sessions.now = func() time.Time { return time.Now().Add(DefaultSessionTTL + time.Minute) }
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ck.Value}), http.StatusSeeOther)
	e.h.sessions.now = time.Now
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ck.Value}), http.StatusSeeOther)

	// Sign out ends the session.
	sid := e.signIn("alice-key")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/signout", cookie: sid, form: url.Values{}}), http.StatusSeeOther)
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: sid}), http.StatusSeeOther)
}

func TestPagesUserConfinedToOwnNamespace(t *testing.T) {
	e := newEnv(t)
	e.seed("bob_example.com/main/MEMORY.md", "bob's\n")
	e.seed("alice/main/MEMORY.md", "alice's\n")
	sid := e.signIn("alice-key")
	// The namespaces page is an admin's: a user is sent to its notebook.
	w := e.page(pageReq{method: "GET", target: "/", cookie: sid})
	wantStatus(t, w, http.StatusSeeOther)
	if loc := w.Header().Get("Location"); loc != "/ns/alice/" {
		t.Fatalf("user home: %q", loc)
	}
	for _, target := range []string{"/ns/bob_example.com/", "/ns/bob_example.com/files/main/MEMORY.md", "/ns/bob_example.com/history/",
		"/ns/bob_example.com/export", "/ns/bob_example.com/search?q=bob", "/ns/bob_example.com/edit/main/MEMORY.md"} {
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		if w.Code != http.StatusNotFound || strings.Contains(w.Body.String(), "bob&#39;s") {
			t.Fatalf("GET %s as alice: %d %s", target, w.Code, w.Body)
		}
	}
	w = e.page(pageReq{method: "POST", target: "/ns/bob_example.com/save", cookie: sid,
		form: url.Values{"path": {"main/MEMORY.md"}, "content": {"pwned"}, "version": {""}, "token": {"t1"}, "new": {"1"}}})
	wantStatus(t, w, http.StatusNotFound)
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/alice/forget", cookie: sid}), http.StatusForbidden)
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/forget", cookie: sid, form: url.Values{"confirm": {"alice"}}}), http.StatusForbidden)
	if got := e.content("bob_example.com/main/MEMORY.md"); got != "bob's\n" {
		t.Fatalf("bob's file = %q", got)
	}
	if got := e.content("alice/main/MEMORY.md"); got != "alice's\n" {
		t.Fatalf("alice's file = %q", got)
	}
}

func TestPagesEditSavesOnceAndShowsConflict(t *testing.T) {
	e := newEnv(t)
	v1 := e.seed("alice/main/MEMORY.md", "- likes tea\n")
	sid := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/edit/main/MEMORY.md", cookie: sid})
	wantStatus(t, w, http.StatusOK)
	form := url.Values{"path": {"main/MEMORY.md"}, "version": {hidden(t, w.Body.String(), "version")},
		"token": {hidden(t, w.Body.String(), "token")}, "content": {"- likes tea\r\n- lives in Hanoi\r\n"}}
	if form.Get("version") != v1 {
		t.Fatalf("the editor carries version %q, want %q", form.Get("version"), v1)
	}
	// A double submit saves once.
	for range 2 {
		w = e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid, form: form})
		wantStatus(t, w, http.StatusSeeOther)
	}
	f, _ := e.s.Read(t.Context(), "alice/main/MEMORY.md", 1<<20)
	if f.Content != "- likes tea\n- lives in Hanoi\n" || f.Metadata[UpdatedByKey] != "alice" || f.Metadata[ClientKey] != "console" {
		t.Fatalf("saved %q %v: want LF line ends, updated_by alice, client console", f.Content, f.Metadata)
	}
	page := e.history(store.HistoryRequest{Path: "alice/main/MEMORY.md"})
	if len(page.Entries) != 2 {
		t.Fatalf("%d history entries after a double submit, want 2 (seed, one save)", len(page.Entries))
	}
	// A stale form: 409 with yours (in the textarea), theirs and the
	// difference; nothing written.
	form.Set("token", "another-render")
	form.Set("content", "- likes coffee\n")
	w = e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid, form: form})
	wantStatus(t, w, http.StatusConflict)
	b := w.Body.String()
	for _, want := range []string{"<textarea id=\"content\" name=\"content\" rows=\"12\" spellcheck=\"false\">\n- likes coffee\n</textarea>",
		"- likes tea\n- lives in Hanoi", `<span class="add">&#43;- likes coffee</span>`, `<span class="del">-- lives in Hanoi</span>`} {
		if !strings.Contains(b, want) {
			t.Fatalf("conflict page lacks %q:\n%s", want, b)
		}
	}
	if hidden(t, b, "version") != f.Version || hidden(t, b, "token") == "another-render" {
		t.Fatal("the conflict form must save against the current version with a new token")
	}
	if got := e.content("alice/main/MEMORY.md"); got != "- likes tea\n- lives in Hanoi\n" {
		t.Fatalf("after the conflict the file holds %q", got)
	}
	// Saving mine over theirs from the conflict form works.
	form.Set("version", hidden(t, b, "version"))
	form.Set("token", hidden(t, b, "token"))
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid, form: form}), http.StatusSeeOther)
	if got := e.content("alice/main/MEMORY.md"); got != "- likes coffee\n" {
		t.Fatalf("after saving mine: %q", got)
	}
}

func TestPagesCreateDeleteRestoreForget(t *testing.T) {
	e := newEnv(t)
	admin := e.signIn("admin-key")
	create := url.Values{"new": {"1"}, "path": {"main/notes.md"}, "version": {""}, "token": {"c1"}, "content": {"one\n"}}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: admin, form: create}), http.StatusSeeOther)
	create.Set("token", "c2")
	w := e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: admin, form: create})
	wantStatus(t, w, http.StatusConflict) // exists now: a second create is a conflict, not an overwrite
	create.Set("path", "../x")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: admin, form: create}), http.StatusBadRequest)

	f, _ := e.s.Read(t.Context(), "alice/main/notes.md", 100)
	v1 := f.Version
	edit := url.Values{"path": {"main/notes.md"}, "version": {v1}, "token": {"e1"}, "content": {"two\n"}}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: admin, form: edit}), http.StatusSeeOther)
	f, _ = e.s.Read(t.Context(), "alice/main/notes.md", 100)

	// Restore v1: a double submit restores once.
	w = e.page(pageReq{method: "GET", target: "/ns/alice/versions/main/notes.md?v=" + url.QueryEscape(v1), cookie: admin})
	wantStatus(t, w, http.StatusOK)
	restore := url.Values{"path": {"main/notes.md"}, "version": {v1}, "current": {hidden(t, w.Body.String(), "current")}, "token": {hidden(t, w.Body.String(), "token")}}
	if restore.Get("current") != f.Version {
		t.Fatalf("the restore form's current = %q, want %q", restore.Get("current"), f.Version)
	}
	for range 2 {
		wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/restore", cookie: admin, form: restore}), http.StatusSeeOther)
	}
	page := e.history(store.HistoryRequest{Path: "alice/main/notes.md"})
	if len(page.Entries) != 3 || page.Entries[0].Metadata[store.RestoredFromKey] != v1 || e.content("alice/main/notes.md") != "one\n" {
		t.Fatalf("after a double restore: %d entries, newest %v", len(page.Entries), page.Entries[0].Metadata)
	}
	// History and diff pages.
	w = e.page(pageReq{method: "GET", target: "/ns/alice/history/", cookie: admin})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), "restore") || !strings.Contains(w.Body.String(), "root") {
		t.Fatalf("history page lacks the restore or who made it: %s", w.Body)
	}
	w = e.page(pageReq{method: "GET", target: "/ns/alice/diff/main/notes.md?from=" + url.QueryEscape(v1) + "&to=" + url.QueryEscape(f.Version), cookie: admin})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), `<span class="del">-one</span>`) || !strings.Contains(w.Body.String(), `<span class="add">&#43;two</span>`) {
		t.Fatalf("diff page: %s", w.Body)
	}

	// Delete with a stale version: refused; with the current one: gone.
	cur, _ := e.s.Read(t.Context(), "alice/main/notes.md", 100)
	del := url.Values{"path": {"main/notes.md"}, "version": {v1}, "token": {"d1"}, "confirm": {"1"}}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: admin, form: del}), http.StatusConflict)
	del.Set("version", cur.Version)
	del.Set("token", "d2")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: admin, form: del}), http.StatusSeeOther)
	if got := e.content("alice/main/notes.md"); got != "<not_found>" {
		t.Fatalf("after delete: %q", got)
	}

	// Forget needs the typed name.
	e.seed("alice/main/MEMORY.md", "x\n")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/forget", cookie: admin, form: url.Values{"confirm": {"alic"}}}), http.StatusBadRequest)
	if e.content("alice/main/MEMORY.md") != "x\n" {
		t.Fatal("a mistyped confirmation erased something")
	}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/forget", cookie: admin, form: url.Values{"confirm": {"alice"}}}), http.StatusOK)
	if got := e.content("alice/main/MEMORY.md"); got != "<not_found>" {
		t.Fatalf("after forget: %q", got)
	}
	if page := e.history(store.HistoryRequest{Prefix: "alice/"}); len(page.Entries) != 0 {
		t.Fatalf("after forget, %d history entries remain", len(page.Entries))
	}
}

func TestPagesRenderStoredMarkupAsText(t *testing.T) {
	e := newEnv(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'`
	if _, err := e.s.Write(t.Context(), store.WriteRequest{Path: "alice/main/evil.md", Content: evil + " evil\n",
		Metadata: map[string]string{"note": evil, UpdatedByKey: evil}}); err != nil {
		t.Fatal(err)
	}
	sid := e.signIn("admin-key")
	for _, target := range []string{"/ns/alice/", "/ns/alice/files/main/evil.md", "/ns/alice/edit/main/evil.md", "/ns/alice/history/",
		"/ns/alice/history/main/evil.md", "/ns/alice/search?q=" + url.QueryEscape(evil+" evil")} {
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		wantStatus(t, w, http.StatusOK)
		b := w.Body.String()
		if strings.Contains(b, "<script>alert") || strings.Contains(b, "<img src=x") {
			t.Fatalf("%s renders stored markup as markup:\n%s", target, b)
		}
		if !strings.Contains(b, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("%s does not show the stored text escaped:\n%s", target, b)
		}
	}
}

func TestPagesRefuseCrossOriginWrites(t *testing.T) {
	e := newEnv(t)
	v := e.seed("alice/main/MEMORY.md", "keep\n")
	sid := e.signIn("alice-key")
	form := url.Values{"path": {"main/MEMORY.md"}, "version": {v}, "token": {"x1"}, "confirm": {"1"}}
	for _, hd := range [][]string{{"Sec-Fetch-Site: cross-site"}, {"Sec-Fetch-Site: same-site"}, {"Origin: https://evil.example"}} {
		w := e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: sid, form: form, headers: hd})
		wantStatus(t, w, http.StatusForbidden)
		if w.Header().Get("Content-Security-Policy") == "" {
			t.Fatal("the refusal page lacks the CSP")
		}
	}
	w := e.page(pageReq{method: "POST", target: "/signin", form: url.Values{"key": {"alice-key"}}, headers: []string{"Sec-Fetch-Site: cross-site"}})
	wantStatus(t, w, http.StatusForbidden) // no login CSRF either
	if e.content("alice/main/MEMORY.md") != "keep\n" {
		t.Fatal("a cross-origin POST deleted the file")
	}
	form.Set("token", "x2")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: sid, form: form, headers: []string{"Sec-Fetch-Site: same-origin"}}), http.StatusSeeOther)
}

func TestPagesUnderPrefix(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/MEMORY.md", "hello\n")
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", e.h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(srv.URL+"/console/signin", url.Values{"key": {"alice-key"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ck := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/ns/alice/" || len(ck) != 1 || ck[0].Path != "/console/" {
		t.Fatalf("sign in under /console: %d %q %v", resp.StatusCode, resp.Header.Get("Location"), ck)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/console/ns/alice/", nil)
	req.AddCookie(ck[0])
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b := string(raw)
	if resp.StatusCode != 200 || !strings.Contains(b, `href="/console/ns/alice/files/main/MEMORY.md"`) || !strings.Contains(b, `href="/console/static/console.css"`) {
		t.Fatalf("notebook under /console: %d %s", resp.StatusCode, b)
	}
	// The API answers beside the pages.
	req, _ = http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/console/api/v1/namespaces/alice/files/main/MEMORY.md", nil)
	req.Header.Set("Authorization", "Bearer alice-key")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("API under /console: %d", resp.StatusCode)
	}
}
