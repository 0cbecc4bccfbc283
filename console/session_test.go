package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// keySet is a key table that a test changes while sessions are signed
// in, as an edited keys file does under agentmem serve.
type keySet struct {
	mu sync.Mutex
	m  map[string]Principal
}

func (k *keySet) set(key string, p *Principal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p == nil {
		delete(k.m, key)
	} else {
		k.m[key] = *p
	}
}

func (k *keySet) auth(r *http.Request) (Principal, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p, known := k.m[key]
	if !ok || !known {
		return Principal{}, ErrUnauthenticated
	}
	return p, nil
}

// A session resolves its key again on every request: a key removed from
// the key set ends its sessions (to sign-in, nothing written), a demoted
// admin's session loses the other namespaces and the admin pages at once.
func TestPagesSessionFollowsTheKeySet(t *testing.T) {
	keys := &keySet{m: map[string]Principal{
		"bob-key": {User: "bob"},
		"ops-key": {User: "ops", Admin: true},
	}}
	s := store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, &Options{Authenticate: keys.auth})
	v := e.seed("bob/main/MEMORY.md", "- bob's\n")
	e.seed("alice/main/MEMORY.md", "- alice's\n")

	bob := e.signIn("bob-key")
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/bob/files/main/MEMORY.md", cookie: bob}), http.StatusOK)
	w := e.page(pageReq{method: "GET", target: "/ns/bob/edit/main/MEMORY.md", cookie: bob})
	wantStatus(t, w, http.StatusOK)
	token := hidden(t, w.Body.String(), "token")
	keys.set("bob-key", nil) // revoked

	w = e.page(pageReq{method: "GET", target: "/ns/bob/files/main/MEMORY.md", cookie: bob})
	wantStatus(t, w, http.StatusSeeOther)
	if loc := w.Header().Get("Location"); loc != "/signin?revoked=1" {
		t.Fatalf("a revoked key's page: Location %q, want the sign-in page", loc)
	}
	if c := w.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("a revoked key's session cookie is not cleared: %v", c)
	}
	w = e.page(pageReq{method: "POST", target: "/ns/bob/save", cookie: bob,
		form: url.Values{"path": {"main/MEMORY.md"}, "version": {v}, "token": {token}, "content": {"- written after revocation\n"}}})
	wantStatus(t, w, http.StatusSeeOther)
	if got := e.content("bob/main/MEMORY.md"); got != "- bob's\n" {
		t.Fatalf("a save through a revoked key's session wrote %q", got)
	}
	// The session is over even if the key comes back.
	keys.set("bob-key", &Principal{User: "bob"})
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/bob/", cookie: bob}), http.StatusSeeOther)
	w = e.page(pageReq{method: "GET", target: "/signin?revoked=1"})
	if !strings.Contains(w.Body.String(), "its key is no longer accepted") {
		t.Fatalf("the sign-in page does not say why the session ended:\n%s", w.Body)
	}

	ops := e.signIn("ops-key")
	w = e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ops})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), `<em class="badge">admin</em>`) {
		t.Fatal("an admin's page lacks the admin badge")
	}
	keys.set("ops-key", &Principal{User: "ops"}) // demoted: "ops admin" became "ops"
	for target, want := range map[string]int{
		"/ns/alice/":                     http.StatusNotFound, // as the API answers a user key
		"/ns/alice/files/main/MEMORY.md": http.StatusNotFound,
		"/ns/ops/forget":                 http.StatusForbidden,
		"/":                              http.StatusSeeOther, // the namespaces page is an admin's: to the own notebook
	} {
		w := e.page(pageReq{method: "GET", target: target, cookie: ops})
		wantStatus(t, w, want)
		if strings.Contains(w.Body.String(), "alice&#39;s") || strings.Contains(w.Body.String(), `class="badge">admin`) {
			t.Fatalf("GET %s as a demoted admin shows alice's notebook or the admin badge:\n%s", target, w.Body)
		}
	}
	w = e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: ops,
		form: url.Values{"path": {"main/MEMORY.md"}, "version": {""}, "new": {"1"}, "token": {"t"}, "content": {"x\n"}}})
	wantStatus(t, w, http.StatusNotFound)
	if got := e.content("alice/main/MEMORY.md"); got != "- alice's\n" {
		t.Fatalf("a demoted admin's save wrote %q", got)
	}
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/ops/", cookie: ops}), http.StatusOK)
}

// A key set that cannot be read fails closed: the page is a 500, the
// session's pages show nothing.
func TestPagesSessionFailsClosed(t *testing.T) {
	broken := false
	var mu sync.Mutex
	e := newEnvOn(t, store.New(newMemDriver(t), nil), &Options{Authenticate: func(r *http.Request) (Principal, error) {
		mu.Lock()
		defer mu.Unlock()
		if broken {
			return Principal{}, errors.New("the key file cannot be read")
		}
		return testAuth(r)
	}})
	e.seed("alice/main/MEMORY.md", "- secret\n")
	sid := e.signIn("alice-key")
	mu.Lock()
	broken = true
	mu.Unlock()
	w := e.page(pageReq{method: "GET", target: "/ns/alice/files/main/MEMORY.md", cookie: sid})
	wantStatus(t, w, http.StatusInternalServerError)
	if strings.Contains(w.Body.String(), "secret") {
		t.Fatal("a page was served while the keys could not be checked")
	}
}

func TestPagesSecureCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		e := newEnvOn(t, store.New(newMemDriver(t), nil), &Options{SecureCookie: secure})
		w := e.page(pageReq{method: "POST", target: "/signin", form: url.Values{"key": {"alice-key"}}})
		wantStatus(t, w, http.StatusSeeOther)
		c := w.Result().Cookies()
		if len(c) != 1 || c[0].Secure != secure {
			t.Fatalf("SecureCookie %v: cookies %v", secure, c)
		}
		sid := c[0].Value
		w = e.page(pageReq{method: "POST", target: "/signout", cookie: sid, form: url.Values{}})
		if c := w.Result().Cookies(); len(c) != 1 || c[0].Secure != secure {
			t.Fatalf("SecureCookie %v: the sign-out's cookie %v", secure, c)
		}
	}
}
