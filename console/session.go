package console

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// DefaultSessionTTL is how long a console sign-in lasts by default.
const DefaultSessionTTL = 12 * time.Hour

// maxSessions bounds the session table: beyond it, signing in first
// drops expired sessions, then the oldest one.
const maxSessions = 10000

// sessionCookie names the console's session cookie.
const sessionCookie = "agentmem_session"

// session is one signed-in browser: the key it signed in with, resolved
// again through Options.Authenticate on every request (so a revoked key
// or a changed role takes effect at once, as in the API), the principal
// it last resolved to, and the one-shot notice of its next page.
type session struct {
	key     string
	p       Principal
	expires time.Time
	flash   *flash
}

// flash is a notice for the next page of a session: shown once, on the
// page at path (the request path under the console's base, unescaped),
// then dropped. Its text is the server's own, never a request's.
type flash struct {
	path string
	Text string
	// Link, when set, is an action the notice offers (restore what was
	// deleted).
	Link *flashLink
}

// flashLink is the link a notice offers.
type flashLink struct{ URL, Label string }

// sessions is the server-side session table: a cookie holds only a random
// id, so signing out or expiring ends a session for good. The keys the
// sessions signed in with stay in this table, in memory, never in a
// cookie or a log.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*session
	ttl time.Duration
	now func() time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{m: map[string]*session{}, ttl: ttl, now: time.Now}
}

// create starts a session for p, signed in with key, and returns its id:
// 32 random bytes.
func (t *sessions) create(p Principal, key string) (string, time.Time) {
	id := randomID(32)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.m) >= maxSessions {
		var oldest string
		for k, s := range t.m {
			if !now.Before(s.expires) {
				delete(t.m, k)
			} else if oldest == "" || s.expires.Before(t.m[oldest].expires) {
				oldest = k
			}
		}
		if len(t.m) >= maxSessions {
			delete(t.m, oldest)
		}
	}
	exp := now.Add(t.ttl)
	t.m[id] = &session{key: key, p: p, expires: exp}
	return id, exp
}

// lookup is a copy of the live session of id (without its notice); an
// expired one is dropped.
func (t *sessions) lookup(id string) (session, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok {
		return session{}, false
	}
	if !t.now().Before(s.expires) {
		delete(t.m, id)
		return session{}, false
	}
	return session{key: s.key, p: s.p, expires: s.expires}, true
}

// update records p, the principal the session's key resolves to now.
func (t *sessions) update(id string, p Principal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[id]; ok {
		s.p = p
	}
}

// setFlash leaves f for the session's next page at f.path, replacing an
// earlier one.
func (t *sessions) setFlash(id string, f *flash) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.m[id]; ok {
		s.flash = f
	}
}

// takeFlash returns and drops the session's notice when it is for path;
// a notice for another page is dropped too (it was not followed), so a
// notice never shows late or twice.
func (t *sessions) takeFlash(id, path string) *flash {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok || s.flash == nil {
		return nil
	}
	f := s.flash
	s.flash = nil
	if f.path != path {
		return nil
	}
	return f
}

func (t *sessions) end(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}

// randomID is n random bytes, base64url.
func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// setSessionCookie sets (or, with id "", clears) the session cookie:
// HttpOnly, SameSite=Strict, scoped to the console's base path, and
// Secure when the request came over TLS or Options.SecureCookie says the
// console is reached over HTTPS (behind a TLS proxy).
func (h *Handler) setSessionCookie(w http.ResponseWriter, r *http.Request, base, id string, expires time.Time) {
	c := &http.Cookie{Name: sessionCookie, Value: id, Path: base + "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secureCookie || r.TLS != nil}
	if id == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}

// Signing in and out: the pages of no session.

type signinData struct {
	Error string
	// Expired says the session ended (expired, signed out elsewhere);
	// Revoked that its key is no longer accepted. Each is a fixed notice
	// picked by a code of the URL, never text from it.
	Expired, Revoked bool
}

// signinPage asks for an API key.
func (h *Handler) signinPage(pc *pageCall) error {
	q := pc.r.URL.Query()
	h.render(pc.w, pc.r, http.StatusOK, "signin", &pageData{Base: pc.base, Title: "Sign in",
		Data: signinData{Expired: q.Get("expired") == "1", Revoked: q.Get("revoked") == "1"}})
	return nil
}

// signin resolves the key typed in through Options.Authenticate, as if it
// came as a bearer token, and starts a session for its principal.
func (h *Handler) signin(pc *pageCall) error {
	w, r, base := pc.w, pc.r, pc.base
	key := strings.TrimSpace(r.PostFormValue("key"))
	fail := func(status int, msg string) error {
		h.render(w, r, status, "signin", &pageData{Base: base, Title: "Sign in", Data: signinData{Error: msg}})
		return nil
	}
	if key == "" {
		return fail(http.StatusBadRequest, "Type your API key.")
	}
	p, err := h.resolveKey(r, key)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		return fail(http.StatusUnauthorized, "That key is not known here.")
	case err != nil:
		h.log.ErrorContext(r.Context(), "agentmem/console: sign-in failed", "error_kind", store.ErrorKind(err))
		return fail(http.StatusInternalServerError, "The server could not check the key; the error is in its log.")
	}
	id, exp := h.sessions.create(p, key)
	h.setSessionCookie(w, r, base, id, exp)
	securityHeaders(w)
	http.Redirect(w, r, homeURL(base, p), http.StatusSeeOther)
	return nil
}

// signout ends the session and forgets its cookie.
func (h *Handler) signout(pc *pageCall) error {
	w, r, base := pc.w, pc.r, pc.base
	if ck, err := r.Cookie(sessionCookie); err == nil {
		h.sessions.end(ck.Value)
	}
	h.setSessionCookie(w, r, base, "", time.Time{})
	securityHeaders(w)
	http.Redirect(w, r, link(base, "signin"), http.StatusSeeOther)
	return nil
}
