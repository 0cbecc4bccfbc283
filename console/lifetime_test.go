package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// testClock is a store clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newClockEnv serves a fresh memstore with history on, on a clock the test
// moves.
func newClockEnv(t *testing.T) (*env, *testClock) {
	t.Helper()
	c := &testClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	s := store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}, Now: c.now})
	t.Cleanup(func() { s.Close() })
	return newEnvOn(t, s, nil), c
}

// lifetimeJSON is a JSON body of content with the lifetime fields given
// (expires and pinned as JSON text, "" to leave one out).
func lifetimeJSON(content, expires, pinned string) string {
	b := `{"content": "` + content + `"`
	if expires != "" {
		b += `, "expires": ` + expires
	}
	if pinned != "" {
		b += `, "pinned": ` + pinned
	}
	return b + "}"
}

// lifetimeIn is the expires_at (zero for none) and pinned of an API file
// or listed file.
func lifetimeIn(t *testing.T, m map[string]any) (time.Time, bool) {
	t.Helper()
	pinned, ok := m["pinned"].(bool)
	if !ok {
		t.Fatalf("%v has no pinned", m)
	}
	s, _ := m["expires_at"].(string)
	if s == "" {
		return time.Time{}, pinned
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("expires_at %q: %v", s, err)
	}
	return at, pinned
}

// TestAPIRetryAfterExpiry checks that a PUT retried under its
// Idempotency-Key after the absolute expiry it gave has passed answers as
// the original did (the receipt's replay), while a new key with the same
// body is refused as the expiry is, and another body under the key is a
// reused key; nothing is written.
func TestAPIRetryAfterExpiry(t *testing.T) {
	e, clock := newClockEnv(t)
	u := aliceFile("main/trip.md")
	at := `"` + clock.now().Add(time.Hour).Format(time.RFC3339) + `"`
	first := e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hanoi until six", at, ""), headers: []string{"Idempotency-Key: k-exp"}}).want(201, "")
	clock.advance(2 * time.Hour)
	again := e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hanoi until six", at, ""), headers: []string{"Idempotency-Key: k-exp"}}).want(201, "")
	if again.Header().Get("ETag") != first.Header().Get("ETag") || again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after the expiry: ETag %q replayed %q, want the original's %q replayed",
			again.Header().Get("ETag"), again.Header().Get("Idempotent-Replayed"), first.Header().Get("ETag"))
	}
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hanoi until six", at, ""), headers: []string{"Idempotency-Key: k-new"}}).want(400, "invalid-lifetime")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hue until six", at, ""), headers: []string{"Idempotency-Key: k-exp"}}).want(422, "idempotency-key-reused")
	e.do(req{method: "GET", target: u, key: "alice-key"}).want(404, "not-found")
}

// The API's file lifetime: given on a write, kept by writes that do not
// name it (JSON or text), shown on reads and listings; contradictions and
// bad expiries refused with a problem that says what to send.
func TestAPIFileLifetime(t *testing.T) {
	e, clock := newClockEnv(t)
	u := aliceFile("main/trip.md")
	r := e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hanoi", `"7d"`, ""), headers: []string{"If-None-Match: *"}}).want(201, "")
	week := clock.now().Add(7 * 24 * time.Hour)
	get := func() (map[string]any, string) {
		t.Helper()
		g := e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, "")
		return g.json(), g.Header().Get("ETag")
	}
	f, etag := get()
	if at, pinned := lifetimeIn(t, f); !at.Equal(week) || pinned {
		t.Fatalf("after expires 7d: expires_at %v pinned %v, want %v unpinned", at, pinned, week)
	}
	if etag != r.Header().Get("ETag") {
		t.Fatalf("ETag %s, the write's %s", etag, r.Header().Get("ETag"))
	}
	// Writes that do not name the lifetime keep it: JSON, then text.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("in Da Nang"), headers: []string{"If-Match: " + etag}}).want(200, "")
	f, etag = get()
	if at, _ := lifetimeIn(t, f); !at.Equal(week) {
		t.Fatalf("a JSON write without expires left expires_at %v, want %v", at, week)
	}
	e.do(req{method: "PUT", target: u, key: "alice-key", body: "in Hue", headers: []string{"If-Match: " + etag, "Content-Type: text/markdown"}}).want(200, "")
	f, etag = get()
	if at, _ := lifetimeIn(t, f); !at.Equal(week) || f["content"] != "in Hue" {
		t.Fatalf("a text write left expires_at %v content %v, want %v", at, f["content"], week)
	}
	// The listing shows it.
	e.do(req{method: "PUT", target: aliceFile("main/MEMORY.md"), key: "alice-key", body: lifetimeJSON("- tea", "", "true"), headers: []string{"If-None-Match: *"}}).want(201, "")
	list := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files", key: "alice-key"}).want(200, "").json()["files"].([]any)
	if len(list) != 2 {
		t.Fatalf("listing %v", list)
	}
	if at, pinned := lifetimeIn(t, list[0].(map[string]any)); !at.IsZero() || !pinned {
		t.Fatalf("listed MEMORY.md: expires_at %v pinned %v, want pinned", at, pinned)
	}
	if at, pinned := lifetimeIn(t, list[1].(map[string]any)); !at.Equal(week) || pinned {
		t.Fatalf("listed trip.md: expires_at %v pinned %v", at, pinned)
	}

	// Contradictions and bad text: 400 invalid-lifetime, saying what to
	// send; nothing written.
	for _, c := range []struct{ body, says string }{
		{lifetimeJSON("x", "", "true"), `send expires "never" with pinned true`},    // pinning an expiring file
		{lifetimeJSON("x", `"2d"`, "true"), `a pinned file never expires`},          // both at once
		{lifetimeJSON("x", `"soon"`, ""), "give a duration from now (7d, 2w, 12h)"}, // unreadable
		{lifetimeJSON("x", `"2026-11-30"`, ""), "not in the future"},
		{lifetimeJSON("x", `7`, ""), ""}, // not a string: the body's JSON
	} {
		r := e.do(req{method: "PUT", target: u, key: "alice-key", body: c.body, headers: []string{"If-Match: " + etag}})
		if c.says == "" {
			r.want(400, "invalid-body")
			continue
		}
		if d, _ := r.want(400, "invalid-lifetime").json()["detail"].(string); !strings.Contains(d, c.says) {
			t.Errorf("%s: detail %q does not say %q", c.body, d, c.says)
		}
	}
	if _, et := get(); et != etag {
		t.Fatal("a refused write wrote")
	}
	// Pinned with expires "never": pinned, no expiry.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("x", `"never"`, "true"), headers: []string{"If-Match: " + etag}}).want(200, "")
	f, etag = get()
	if at, pinned := lifetimeIn(t, f); !at.IsZero() || !pinned {
		t.Fatalf("after pinning: expires_at %v pinned %v", at, pinned)
	}
	if d, _ := e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("x", `"2d"`, ""), headers: []string{"If-Match: " + etag}}).
		want(400, "invalid-lifetime").json()["detail"].(string); !strings.Contains(d, "send pinned false with the expiry") {
		t.Errorf("an expiry for a pinned file: detail %q", d)
	}
	// Unpinned with an expiry at once.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("x", `"2026-12-31"`, "false"), headers: []string{"If-Match: " + etag}}).want(200, "")
	f, etag = get()
	if at, pinned := lifetimeIn(t, f); !at.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || pinned {
		t.Fatalf("after expires 2026-12-31: expires_at %v pinned %v, want the end of that day", at, pinned)
	}
	// MEMORY.md never expires; the store's own keys are not metadata.
	me := e.do(req{method: "GET", target: aliceFile("main/MEMORY.md"), key: "alice-key"}).want(200, "")
	if d, _ := e.do(req{method: "PUT", target: aliceFile("main/MEMORY.md"), key: "alice-key", body: lifetimeJSON("- tea", `"1d"`, "false"),
		headers: []string{"If-Match: " + me.Header().Get("ETag")}}).want(400, "invalid-lifetime").json()["detail"].(string); !strings.Contains(d, "MEMORY.md never expires") {
		t.Errorf("an expiry for MEMORY.md: detail %q", d)
	}
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"content": "x", "metadata": {"agentmem:pinned": "true"}}`,
		headers: []string{"If-Match: " + etag}}).want(400, "invalid-metadata")
	// The Idempotency-Key covers the lifetime: the same key with another
	// pin is another request.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("y", "", ""), headers: []string{"If-Match: " + etag, "Idempotency-Key: l-1"}}).want(200, "")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("y", "", "false"), headers: []string{"If-Match: " + etag, "Idempotency-Key: l-1"}}).want(422, "idempotency-key-reused")
}

// The lifetime's mistakes are store.ErrInvalidLifetime, as the store's
// own refusal is, so one mapping answers them all.
func TestLifetimeErrorsAreInvalidLifetime(t *testing.T) {
	now := time.Now()
	yes, soon := true, "1h"
	if _, err := parseLifetime(&soon, &yes, now); !errors.Is(err, store.ErrInvalidLifetime) {
		t.Fatalf("pinned and expiring: %v", err)
	}
	bad := "later"
	if _, err := parseLifetime(&bad, nil, now); !errors.Is(err, store.ErrInvalidLifetime) {
		t.Fatalf("unreadable: %v", err)
	}
	at := now.Add(time.Hour)
	if _, _, err := (lifetimeEdit{expires: &at}).over(time.Time{}, true); !errors.Is(err, store.ErrInvalidLifetime) {
		t.Fatalf("an expiry for a pinned file: %v", err)
	}
	if e, err := parseLifetime(nil, nil, now); err != nil || e.expires != nil || e.pinned != nil || len(e.fingerprint()) != 0 {
		t.Fatalf("naming nothing: %+v %v", e, err)
	}
}

// An expired file is gone from the API at once; the history records the
// expiry as a delete by agentmem-expiry, and a restore brings it back
// without its expiry.
func TestAPIExpiredFileRestores(t *testing.T) {
	e, clock := newClockEnv(t)
	u := aliceFile("main/trip.md")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: lifetimeJSON("in Hanoi", `"1h"`, ""), headers: []string{"If-None-Match: *"}}).want(201, "")
	clock.advance(2 * time.Hour)
	e.do(req{method: "GET", target: u, key: "alice-key"}).want(404, "not-found")
	if list := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files", key: "alice-key"}).want(200, "").json()["files"].([]any); len(list) != 0 {
		t.Fatalf("an expired file is listed: %v", list)
	}
	h := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history/main/trip.md", key: "alice-key"}).want(200, "").json()["entries"].([]any)
	if len(h) != 2 {
		t.Fatalf("history %v, want the expiry and the write", h)
	}
	exp, wrote := h[0].(map[string]any), h[1].(map[string]any)
	if exp["kind"] != "delete" || exp["metadata"].(map[string]any)[UpdatedByKey] != store.ExpiryUpdatedBy {
		t.Fatalf("the expiry recorded as %v", exp)
	}
	if wrote["expires_at"] != "2026-12-02T11:00:00Z" {
		t.Fatalf("the write's entry %v lacks the expiry it gave", wrote)
	}
	e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/trip.md", key: "alice-key",
		body: `{"version": "` + wrote["version"].(string) + `"}`, headers: []string{"If-None-Match: *"}}).want(200, "")
	f := e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, "").json()
	if at, pinned := lifetimeIn(t, f); f["content"] != "in Hanoi" || !at.IsZero() || pinned {
		t.Fatalf("restored %v", f)
	}
}

// The file page shows the lifetime and sets it with a form (once per
// render); the listings, the snapshot, the editor and the history show
// it; the editor's save keeps it; an expired file's history shows the
// expiry and its version restores.
func TestPagesFileLifetime(t *testing.T) {
	e, clock := newClockEnv(t)
	e.seed("alice/main/MEMORY.md", "- likes tea\n")
	e.seed("alice/main/trip.md", "- in Hanoi until Friday\n")
	e.seed("alice/main/work.md", "- the sprint goal\n")
	sid := e.signIn("alice-key")
	get := func(target string) string {
		t.Helper()
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		wantStatus(t, w, http.StatusOK)
		return w.Body.String()
	}
	contains := func(what, b string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(b, w) {
				t.Fatalf("%s lacks %q:\n%s", what, w, b)
			}
		}
	}
	read := func(p string) *store.File {
		t.Helper()
		f, err := e.s.Read(t.Context(), p, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// formOf is the lifetime form of the file page at rel.
	formOf := func(rel string) url.Values {
		b := get("/ns/alice/files/" + rel)
		return url.Values{"path": {rel}, "version": {hidden(t, b, "version")}, "token": {hidden(t, b, "token")}}
	}

	b := get("/ns/alice/files/main/trip.md")
	contains("the file page", b, `action="/ns/alice/lifetime"`, `name="pinned" value="1">`, `name="expires" value=""`)
	if strings.Contains(b, `<em class="life`) {
		t.Fatal("a file with no lifetime is marked")
	}
	// Pin it: a double submit applies once.
	pin := formOf("main/trip.md")
	pin.Set("pinned", "1")
	for range 2 {
		w := e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: pin})
		wantStatus(t, w, http.StatusSeeOther)
		if loc := w.Header().Get("Location"); loc != "/ns/alice/files/main/trip.md" {
			t.Fatalf("the form redirects to %s", loc)
		}
	}
	if f := read("alice/main/trip.md"); !f.Pinned || f.Content != "- in Hanoi until Friday\n" || f.Metadata[UpdatedByKey] != "alice" {
		t.Fatalf("after pinning: %+v", f)
	}
	if n := len(e.history(store.HistoryRequest{Path: "alice/main/trip.md"}).Entries); n != 2 {
		t.Fatalf("%d history entries after a double submit, want 2", n)
	}
	contains("the pinned file's page", get("/ns/alice/files/main/trip.md"), "Pinned: it never expires.", `<em class="life pinned">pinned</em>`, `name="pinned" value="1" checked>`)

	// Give work.md an expiry.
	exp := formOf("main/work.md")
	exp.Set("expires", "30d")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: exp}), http.StatusSeeOther)
	at := clock.now().Add(30 * 24 * time.Hour)
	if f := read("alice/main/work.md"); !f.ExpiresAt.Equal(at) || f.Pinned {
		t.Fatalf("after expires 30d: %v %v, want %v", f.ExpiresAt, f.Pinned, at)
	}
	label := "expires " + memory.FormatExpiry(at)
	b = get("/ns/alice/files/main/work.md")
	contains("the expiring file's page", b, `<em class="life expires">`+label+`</em>`, `name="expires" value="`+at.Format(time.RFC3339)+`"`)

	// The listings and what the model sees mark both.
	contains("the notebook", get("/ns/alice/"), `<em class="life pinned">pinned</em>`, `<em class="life expires">`+label+`</em>`,
		"trip.md (pinned)", "work.md ("+label+")")
	contains("the folder", get("/ns/alice/tree/main"), `<em class="life pinned">pinned</em>`, `<em class="life expires">`+label+`</em>`)
	contains("the history", get("/ns/alice/history/main/work.md"), `<em class="life expires">`+label+`</em>`)

	// Pinned with the expiry still in the field: refused, saying what to
	// do; nothing written.
	both := formOf("main/work.md")
	both.Set("pinned", "1")
	both.Set("expires", at.Format(time.RFC3339))
	w := e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: both})
	wantStatus(t, w, http.StatusUnprocessableEntity)
	contains("the refused form", w.Body.String(), `<p class="error" role="alert">a pinned file never expires: clear Expires to pin it`)
	if f := read("alice/main/work.md"); f.Pinned || !f.ExpiresAt.Equal(at) {
		t.Fatalf("a refused form wrote: %+v", f)
	}
	bad := formOf("main/work.md")
	bad.Set("expires", "next week")
	w = e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: bad})
	wantStatus(t, w, http.StatusUnprocessableEntity)
	contains("the refused form", w.Body.String(), "give a duration from now (7d, 2w, 12h)")

	// The editor says the save keeps it, and the save does.
	for _, rel := range []string{"main/trip.md", "main/work.md"} {
		b := get("/ns/alice/edit/" + rel)
		contains("the editor", b, "Saving keeps it")
		form := url.Values{"path": {rel}, "version": {hidden(t, b, "version")}, "token": {hidden(t, b, "token")}, "content": {"- edited\n"}}
		wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid, form: form}), http.StatusSeeOther)
	}
	if f := read("alice/main/trip.md"); !f.Pinned || f.Content != "- edited\n" {
		t.Fatalf("the save dropped the pin: %+v", f)
	}
	if f := read("alice/main/work.md"); !f.ExpiresAt.Equal(at) || f.Content != "- edited\n" {
		t.Fatalf("the save dropped the expiry: %+v", f)
	}
	// The form shown unchanged keeps the expiry exactly; cleared, none.
	clock.advance(1500 * time.Millisecond)
	same := formOf("main/work.md")
	same.Set("expires", at.Format(time.RFC3339))
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: same}), http.StatusSeeOther)
	if f := read("alice/main/work.md"); !f.ExpiresAt.Equal(at) {
		t.Fatalf("an unchanged form moved the expiry to %v, want %v", f.ExpiresAt, at)
	}
	unpin := formOf("main/trip.md")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: unpin}), http.StatusSeeOther)
	if f := read("alice/main/trip.md"); f.Pinned || !f.ExpiresAt.IsZero() {
		t.Fatalf("after unpinning: %+v", f)
	}
	// MEMORY.md's form has no expiry.
	b = get("/ns/alice/files/main/MEMORY.md")
	contains("MEMORY.md's page", b, "it never expires")
	if strings.Contains(b, `name="expires"`) {
		t.Fatal("MEMORY.md's page offers an expiry")
	}

	// Expired: gone from the notebook; its history shows the expiry by
	// agentmem-expiry, the deleted view says why, and its last version
	// restores (the file absent).
	soon := formOf("main/work.md")
	soon.Set("expires", "1h")
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/lifetime", cookie: sid, form: soon}), http.StatusSeeOther)
	last := read("alice/main/work.md").Version
	clock.advance(2 * time.Hour)
	if strings.Contains(get("/ns/alice/"), "work.md") {
		t.Fatal("the notebook lists an expired file")
	}
	b = get("/ns/alice/history/main/work.md")
	contains("the expired file's history", b, `<span class="kind delete expired">expired</span>`, store.ExpiryUpdatedBy)
	contains("the deleted view", get("/ns/alice/deleted"), "main/work.md", `<td class="opt why">expired</td>`)
	b = get("/ns/alice/versions/main/work.md?v=" + url.QueryEscape(last))
	contains("the version before the expiry", b, "the file is deleted now", "without its expiry")
	restore := url.Values{"path": {"main/work.md"}, "version": {last}, "current": {hidden(t, b, "current")}, "token": {hidden(t, b, "token")}}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/restore", cookie: sid, form: restore}), http.StatusSeeOther)
	if f := read("alice/main/work.md"); f.Content != "- edited\n" || !f.ExpiresAt.IsZero() {
		t.Fatalf("restored after the expiry: %+v", f)
	}
}

// The consolidate request records keep their lifetime when the retention
// stamps them, and a pinned one is never deleted by the retention.
func TestConsolidateRecordKeepsLifetime(t *testing.T) {
	e, _ := newConsolidateEnv(t, consolidateAnswer)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := t0
	e.h.now = func() time.Time { return clock }
	legacy := recordsOf("alice") + "0123456789abcdef0123456789abcdef01234567.json"
	if _, err := e.s.Write(t.Context(), store.WriteRequest{Path: legacy, Content: `{"fingerprint":"f","done":false}` + "\n", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-1")).want(200, "")
	f, err := e.s.Read(t.Context(), legacy, 100)
	if err != nil || !f.Pinned || f.Metadata[RecordedAtKey] == "" {
		t.Fatalf("the stamped record: %+v %v, want pinned with a time", f, err)
	}
	clock = t0.Add(DefaultConsolidateRecordRetention + 24*time.Hour)
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-2")).want(200, "")
	if f, err := e.s.Read(t.Context(), legacy, 100); err != nil || !f.Pinned {
		t.Fatalf("the retention deleted a pinned record: %+v %v", f, err)
	}
}

// A consolidation's edit may give a file an expiry ("until Friday"): the
// preview and the result list it, since the diff shows content only, and
// applying it sets it.
func TestConsolidateProposesExpiry(t *testing.T) {
	trip := appendOf("trip.md", "- in Hue until Friday")
	trip["expires"] = "7d"
	e, _ := newConsolidateEnv(t, editsAnswer(trip))
	ck := e.signIn("alice-key")
	w := e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: url.Values{"token": {"p-1"}, "mode": {"preview"}}})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), `Proposed expiries: <span class="path">main/trip.md</span> expires 7d`) {
		t.Fatalf("the preview does not show the proposed expiry:\n%s", w.Body)
	}
	for _, dry := range []bool{true, false} {
		q := ""
		if dry {
			q = "?dry_run=1"
		}
		r := e.do(consolidateReq("alice", "alice-key", q)).want(200, "").json()
		ex, _ := r["expiries"].([]any)
		if len(ex) != 1 || ex[0].(map[string]any)["file"] != "main/trip.md" || ex[0].(map[string]any)["expires"] != "7d" {
			t.Fatalf("dry run %v: expiries %v", dry, r["expiries"])
		}
	}
	f, err := e.s.Read(t.Context(), "alice/main/trip.md", 100)
	if err != nil || f.ExpiresAt.IsZero() {
		t.Fatalf("the applied edit: %+v %v, want an expiry", f, err)
	}
}
