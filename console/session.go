package console

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// DefaultSessionTTL is how long a console sign-in lasts by default.
const DefaultSessionTTL = 12 * time.Hour

// maxSessions bounds the session table: beyond it, signing in first
// drops expired sessions, then the oldest one.
const maxSessions = 10000

// sessionCookie names the console's session cookie.
const sessionCookie = "agentmem_session"

// session is one signed-in browser: the principal its key resolved to.
type session struct {
	p       Principal
	expires time.Time
}

// sessions is the server-side session table: a cookie holds only a random
// id, so signing out or expiring ends a session for good.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*session
	ttl time.Duration
	now func() time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{m: map[string]*session{}, ttl: ttl, now: time.Now}
}

// create starts a session for p and returns its id: 32 random bytes.
func (t *sessions) create(p Principal) (string, time.Time) {
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
	t.m[id] = &session{p: p, expires: exp}
	return id, exp
}

// lookup is the live session of id; an expired one is dropped.
func (t *sessions) lookup(id string) (*session, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok {
		return nil, false
	}
	if !t.now().Before(s.expires) {
		delete(t.m, id)
		return nil, false
	}
	return s, true
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
// HttpOnly, SameSite=Strict, Secure when the request came over TLS, scoped
// to the console's base path.
func setSessionCookie(w http.ResponseWriter, r *http.Request, base, id string, expires time.Time) {
	c := &http.Cookie{Name: sessionCookie, Value: id, Path: base + "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
	if id == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}
