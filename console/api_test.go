package console

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

func TestNewRefusesMissingOptions(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	for name, tc := range map[string]struct {
		s    *store.Store
		opts *Options
	}{
		"nil store":         {nil, &Options{Authenticate: testAuth}},
		"store, no driver":  {store.New(nil, nil), &Options{Authenticate: testAuth}},
		"nil options":       {s, nil},
		"nil Authenticate":  {s, &Options{}},
		"negative body":     {s, &Options{Authenticate: testAuth, MaxBodyBytes: -1}},
		"fixed namespace":   {s, &Options{Authenticate: testAuth, Memory: &memory.Options{Namespace: "kamal"}}},
		"bad memory option": {s, &Options{Authenticate: testAuth, Memory: &memory.Options{AgentName: "a/b"}}},
	} {
		if _, err := New(tc.s, tc.opts); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: New = %v, want ErrOptions", name, err)
		}
	}
}

func TestCreateUpdateStaleAndPreconditions(t *testing.T) {
	e := newEnv(t)
	u := aliceFile("main/MEMORY.md")
	r := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("- lives in Hanoi\n"), headers: []string{"If-None-Match: *"}}).want(201, "")
	v1 := r.Header().Get("ETag")
	if v1 == "" || r.json()["version"] == "" || ETag(r.json()["version"].(string)) != v1 {
		t.Fatalf("create: ETag %q, body %s", v1, r.Body)
	}
	// If-None-Match: * on an existing file: 412, nothing written.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("x"), headers: []string{"If-None-Match: *"}}).want(412, "precondition-failed")
	// No precondition on an existing file: 428, nothing written.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("x")}).want(428, "precondition-required")
	// Update with If-Match: 200 and a new ETag.
	r = e.do(req{method: "PUT", target: u, key: "alice-key", body: body("- lives in Da Nang\n"), headers: []string{"If-Match: " + v1}}).want(200, "")
	v2 := r.Header().Get("ETag")
	if v2 == v1 {
		t.Fatal("update kept the ETag")
	}
	// A stale If-Match: 412, nothing written.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("lost"), headers: []string{"If-Match: " + v1}}).want(412, "precondition-failed")
	if got := e.content("alice/main/MEMORY.md"); got != "- lives in Da Nang\n" {
		t.Fatalf("content after refused writes = %q", got)
	}
	// Read: the content, its ETag, and who wrote it.
	r = e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, "")
	m := r.json()
	if r.Header().Get("ETag") != v2 || m["content"] != "- lives in Da Nang\n" || m["path"] != "main/MEMORY.md" {
		t.Fatalf("read %s, ETag %s", r.Body, r.Header().Get("ETag"))
	}
	md := m["metadata"].(map[string]any)
	if md[UpdatedByKey] != "alice" || md[ClientKey] != "test" {
		t.Fatalf("metadata %v, want updated_by alice and client test", md)
	}
	e.do(req{method: "GET", target: u, key: "alice-key", headers: []string{"If-None-Match: " + v2}}).want(304, "")
	// Bad precondition headers.
	for _, h := range [][]string{{"If-Match: *"}, {"If-Match: " + v2, "If-None-Match: *"}, {"If-Match: W/" + v2}, {"If-None-Match: " + v2}, {"If-Match: nope"}} {
		e.do(req{method: "PUT", target: u, key: "alice-key", body: body("x"), headers: h}).want(400, "invalid-precondition")
	}
	// Raw markdown body.
	r = e.do(req{method: "PUT", target: aliceFile("main/raw.md"), key: "alice-key", body: "# raw\n", headers: []string{"Content-Type: text/markdown"}}).want(201, "")
	if got := e.content("alice/main/raw.md"); got != "# raw\n" {
		t.Fatalf("raw body stored %q", got)
	}
	// Delete needs If-Match; stale is 412; then 204 and 404.
	e.do(req{method: "DELETE", target: u, key: "alice-key"}).want(428, "precondition-required")
	e.do(req{method: "DELETE", target: u, key: "alice-key", headers: []string{"If-Match: " + v1}}).want(412, "precondition-failed")
	e.do(req{method: "DELETE", target: u, key: "alice-key", headers: []string{"If-Match: " + v2}}).want(204, "")
	e.do(req{method: "GET", target: u, key: "alice-key"}).want(404, "not-found")
}

func TestWriteBodyErrors(t *testing.T) {
	e := newEnv(t)
	e2 := newEnvOn(t, e.s, &Options{MaxBodyBytes: 64})
	u := aliceFile("main/x.md")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"content": "a", "extra": 1}`}).want(400, "invalid-body")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"metadata": {}}`}).want(400, "invalid-body")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"content": "a"} {}`}).want(400, "invalid-body")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"content": "a", "metadata": {"updated_by": "mallory"}}`}).want(400, "invalid-metadata")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: `{"content": "a", "metadata": {"k": "` + strings.Repeat("v", 5000) + `"}}`}).want(400, "invalid-metadata")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: "a", headers: []string{"Content-Type: application/xml"}}).want(415, "unsupported-media-type")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: "\xff\xfe", headers: []string{"Content-Type: text/plain"}}).want(400, "invalid-content")
	e.do(req{method: "PUT", target: aliceFile("main/.agentmem-x"), key: "alice-key", body: body("a")}).want(400, "invalid-path")
	e2.do(req{method: "PUT", target: u, key: "alice-key", body: body(strings.Repeat("a", 100))}).want(413, "too-large")
	if got := e.content("alice/main/x.md"); got != "<not_found>" {
		t.Fatalf("a refused write stored %q", got)
	}
	// A file and a folder cannot share a name.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("a")}).want(201, "")
	e.do(req{method: "PUT", target: aliceFile("main/x.md/y.md"), key: "alice-key", body: body("a")}).want(409, "path-collision")
}

func TestIdempotencyKeyAppliedOnce(t *testing.T) {
	e := newEnv(t)
	u := aliceFile("main/MEMORY.md")
	first := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("one\n"), headers: []string{"Idempotency-Key: k-1"}}).want(201, "")
	again := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("one\n"), headers: []string{"Idempotency-Key: k-1"}}).want(201, "")
	if again.Header().Get("ETag") != first.Header().Get("ETag") || again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry answered %s %v, first %s %v", again.Body, again.Header(), first.Body, first.Header())
	}
	// The same key with another body, path or precondition: 422, nothing written.
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("two\n"), headers: []string{"Idempotency-Key: k-1"}}).want(422, "idempotency-key-reused")
	e.do(req{method: "PUT", target: aliceFile("main/other.md"), key: "alice-key", body: body("one\n"), headers: []string{"Idempotency-Key: k-1"}}).want(422, "idempotency-key-reused")
	e.do(req{method: "DELETE", target: u, key: "alice-key", headers: []string{"Idempotency-Key: k-1", "If-Match: " + first.Header().Get("ETag")}}).want(422, "idempotency-key-reused")
	// Another user's identical key is another operation: bob's write lands.
	e.do(req{method: "PUT", target: "/api/v1/namespaces/bob_40example.com/files/main/MEMORY.md", key: "bob-key", body: body("one\n"), headers: []string{"Idempotency-Key: k-1"}}).want(201, "")
	page, err := e.s.History(t.Context(), store.HistoryRequest{Path: "alice/main/MEMORY.md", Limit: 10})
	if err != nil || len(page.Entries) != 1 || e.content("alice/main/MEMORY.md") != "one\n" {
		t.Fatalf("history %v %v, content %q: want one write", page.Entries, err, e.content("alice/main/MEMORY.md"))
	}
	// A retried update and delete answer the same too.
	v := first.Header().Get("ETag")
	up := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("three\n"), headers: []string{"Idempotency-Key: k-2", "If-Match: " + v}}).want(200, "")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("three\n"), headers: []string{"Idempotency-Key: k-2", "If-Match: " + v}}).want(200, "")
	v3 := up.Header().Get("ETag")
	e.do(req{method: "DELETE", target: u, key: "alice-key", headers: []string{"Idempotency-Key: k-3", "If-Match: " + v3}}).want(204, "")
	r := e.do(req{method: "DELETE", target: u, key: "alice-key", headers: []string{"Idempotency-Key: k-3", "If-Match: " + v3}}).want(204, "")
	if r.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatal("a retried delete is not marked replayed")
	}
	for _, k := range []string{strings.Repeat("k", 256), "caf\u00e9", `""`} {
		e.do(req{method: "PUT", target: u, key: "alice-key", body: body("x"), headers: []string{"Idempotency-Key: " + k}}).want(400, "invalid-idempotency-key")
	}
}

func TestAuthProblems(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", target: aliceFile("main/MEMORY.md")}).want(401, "unauthenticated")
	if got := r.Header().Get("WWW-Authenticate"); got != `Bearer realm="agentmem"` {
		t.Fatalf("WWW-Authenticate %q", got)
	}
	e.do(req{method: "GET", target: "/api/v1/me", key: "wrong"}).want(401, "unauthenticated")
	e.do(req{method: "GET", target: "/api/v1/namespaces", key: "alice-key"}).want(403, "admin-required")
	e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice?confirm=alice", key: "alice-key"}).want(403, "admin-required")
	me := e.do(req{method: "GET", target: "/api/v1/me", key: "bob-key"}).want(200, "").json()
	if me["namespace"] != "bob_40example.com" || me["user"] != "bob@example.com" || me["admin"] != false {
		t.Fatalf("me = %v", me)
	}
	e.do(req{method: "PATCH", target: aliceFile("x"), key: "alice-key"}).want(405, "method-not-allowed")
	e.do(req{method: "GET", target: "/api/v1/nothing", key: "alice-key"}).want(404, "no-such-route")

	// Authenticate failing otherwise is a 500 (fail closed), with no detail.
	broken := newEnvOn(t, e.s, &Options{Logger: slog.New(slog.DiscardHandler), Authenticate: func(*http.Request) (Principal, error) { return Principal{}, errors.New("key file unreadable") },
		ResourceMetadataURL: "https://mem.example/.well-known/oauth-protected-resource"})
	r = broken.do(req{method: "GET", target: "/api/v1/me", key: "alice-key"}).want(500, "internal")
	if strings.Contains(r.Body.String(), "unreadable") {
		t.Fatalf("500 shows the error: %s", r.Body)
	}
	empty := newEnvOn(t, e.s, &Options{Authenticate: func(*http.Request) (Principal, error) { return Principal{}, nil },
		ResourceMetadataURL: "https://mem.example/.well-known/oauth-protected-resource"})
	r = empty.do(req{method: "GET", target: "/api/v1/me"}).want(401, "unauthenticated")
	if got := r.Header().Get("WWW-Authenticate"); !strings.Contains(got, `resource_metadata="https://mem.example/.well-known/oauth-protected-resource"`) {
		t.Fatalf("WWW-Authenticate %q lacks resource_metadata", got)
	}
}

// TestUserNeverReachesAnotherNamespace walks every route with alice's key
// against bob's namespace, an admin-only one and escaped or traversing
// paths: nothing succeeds, nothing is written, and a user sees 404 where
// another namespace is concerned.
func TestUserNeverReachesAnotherNamespace(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	bobNS := "bob_40example.com"
	m, err := e.s.Write(ctx, store.WriteRequest{Path: bobNS + "/main/MEMORY.md", Content: "bob's secret\n"})
	if err != nil {
		t.Fatal(err)
	}
	tag := ETag(m.Version)
	before := snapshotStore(t, e.s)
	targets := []string{bobNS, "bob", "alice-b", "ALICE", "alice%2F..%2F" + bobNS, "%2e%2e", "..", "alice/..", "."}
	for _, rt := range apiRoutes() {
		if rt.role == rolePublic {
			continue
		}
		for _, ns := range targets {
			for _, rel := range []string{"main/MEMORY.md", "..%2F..%2F" + bobNS + "%2Fmain%2FMEMORY.md", "%2e%2e/%2e%2e/" + bobNS + "/main/MEMORY.md", "main//MEMORY.md", "main/%2E/MEMORY.md"} {
				target := strings.NewReplacer("{ns}", ns, "{path...}", rel).Replace(rt.pattern) + "?v=" + m.Version + "&from=" + m.Version + "&confirm=" + ns + "&q=secret"
				if !rt.namespaced {
					target = rt.pattern
					if rt.role == roleAdmin {
						target += "?confirm=" + ns
					}
				}
				r := e.do(req{method: rt.method, target: target, key: "alice-key", body: `{"content": "pwned", "version": "` + m.Version + `"}`,
					headers: []string{"If-Match: " + tag, "Idempotency-Key: evil"}})
				if rt.op == "getPrincipal" {
					continue
				}
				if r.Code < 400 || strings.Contains(r.Body.String(), "secret") {
					t.Errorf("%s %s as alice: %d %s", rt.method, target, r.Code, r.Body)
				}
				if rt.namespaced && ns == bobNS && rel == "main/MEMORY.md" && r.Code != 404 {
					t.Errorf("%s %s as alice: %d, want 404 for another namespace", rt.method, target, r.Code)
				}
			}
		}
	}
	if after := snapshotStore(t, e.s); after != before {
		t.Fatalf("store changed:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotStore is every file with its version.
func snapshotStore(t *testing.T, s *store.Store) string {
	t.Helper()
	var b strings.Builder
	for p, err := range s.Walk(t.Context(), "", 0) {
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.Read(t.Context(), p, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s@%s=%q ", p, f.Version, f.Content)
	}
	return b.String()
}

func TestListPaginationAndNamespaces(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	var want []string
	for i := range 7 {
		p := fmt.Sprintf("main/n%02d.md", i)
		want = append(want, p)
		if _, err := e.s.Write(ctx, store.WriteRequest{Path: "alice/" + p, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	// A deleted file (a tombstone) and a neighbour namespace are not listed.
	m, _ := e.s.Write(ctx, store.WriteRequest{Path: "alice/main/gone.md", Content: "x"})
	e.s.Delete(ctx, store.DeleteRequest{Path: "alice/main/gone.md", Expected: m.Version})
	e.s.Write(ctx, store.WriteRequest{Path: "alice-b/main/MEMORY.md", Content: "x"})
	e.s.Write(ctx, store.WriteRequest{Path: "toplevel.md", Content: "x"})
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		target := "/api/v1/namespaces/alice/files?limit=3&prefix=main/"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		page := e.do(req{method: "GET", target: target, key: "alice-key"}).want(200, "").json()
		for _, f := range page["files"].([]any) {
			got = append(got, f.(map[string]any)["path"].(string))
		}
		c, _ := page["next_cursor"].(string)
		if c == "" {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		cursor = c
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	// A cursor of another namespace or listing is refused.
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice-b/files?cursor=" + cursor, key: "admin-key"}).want(400, "invalid-cursor")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history?cursor=" + cursor, key: "alice-key"}).want(400, "invalid-cursor")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files?cursor=garbage!", key: "alice-key"}).want(400, "invalid-cursor")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files?limit=0", key: "alice-key"}).want(400, "invalid-parameter")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files?prefix=..", key: "alice-key"}).want(400, "invalid-path")

	// Namespaces (admin), one per page, then all.
	var names []string
	cursor = ""
	for {
		target := "/api/v1/namespaces?limit=1"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		page := e.do(req{method: "GET", target: target, key: "admin-key"}).want(200, "").json()
		for _, n := range page["namespaces"].([]any) {
			n := n.(map[string]any)
			names = append(names, fmt.Sprintf("%s:%v", n["name"], n["files"]))
			if n["last_change"] == nil {
				t.Fatalf("namespace %v has no last_change", n)
			}
		}
		if cursor, _ = page["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if fmt.Sprint(names) != "[alice-b:1 alice:7]" {
		t.Fatalf("namespaces %v", names)
	}
	ns := e.do(req{method: "GET", target: "/api/v1/namespaces/alice", key: "alice-key"}).want(200, "").json()
	if ns["files"] != float64(7) {
		t.Fatalf("namespace %v", ns)
	}
	e.do(req{method: "GET", target: "/api/v1/namespaces/a%2Fb", key: "admin-key"}).want(400, "invalid-namespace")
}

func TestSearchAndSnapshot(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- prefers window seats on flights\n"})
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/travel.md", Content: "flights to Hanoi in May\n"})
	e.s.Write(ctx, store.WriteRequest{Path: "bob_40example.com/main/MEMORY.md", Content: "flights flights flights\n"})
	res := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=flights", key: "alice-key"}).want(200, "").json()
	ms := res["matches"].([]any)
	if len(ms) != 2 || res["scanned"] != float64(2) {
		t.Fatalf("search %v", res)
	}
	for _, m := range ms {
		m := m.(map[string]any)
		if !strings.HasPrefix(m["path"].(string), "main/") || m["score"].(float64) <= 0 || m["snippet"] == "" {
			t.Fatalf("match %v", m)
		}
	}
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=+", key: "alice-key"}).want(400, "invalid-parameter")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=" + strings.Repeat("a", 1001), key: "alice-key"}).want(400, "invalid-parameter")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/search?q=a&folder=..", key: "alice-key"}).want(400, "invalid-path")

	snap := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/snapshot", key: "alice-key"}).want(200, "").json()
	mem, err := memory.New(e.s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mem.Snapshot(ctx, "alice")
	if err != nil || want == "" {
		t.Fatal(want, err)
	}
	if snap["snapshot"] != want || snap["instructions"] != mem.Instructions() || strings.Contains(want, "bob") {
		t.Fatalf("snapshot %q, want %q", snap["snapshot"], want)
	}
}

func TestHistoryVersionDiffRestore(t *testing.T) {
	e := newEnv(t)
	u := aliceFile("main/MEMORY.md")
	r1 := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("a\nb\nc\n")}).want(201, "")
	v1 := r1.json()["version"].(string)
	r2 := e.do(req{method: "PUT", target: u, key: "admin-key", body: body("a\nB\nc\n"), headers: []string{"If-Match: " + r1.Header().Get("ETag")}}).want(200, "")
	v2 := r2.json()["version"].(string)

	hist := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history/main/MEMORY.md", key: "alice-key"}).want(200, "").json()
	entries := hist["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("history %v", hist)
	}
	newest := entries[0].(map[string]any)
	if newest["version"] != v2 || newest["kind"] != "write" || newest["metadata"].(map[string]any)[UpdatedByKey] != "root" || newest["metadata"].(map[string]any)[ClientKey] != "ops" {
		t.Fatalf("newest entry %v: want v2 by root from ops", newest)
	}
	// Paging the namespace history.
	page := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history?limit=1", key: "alice-key"}).want(200, "").json()
	next := page["next_cursor"].(string)
	page = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history?limit=1&cursor=" + next, key: "alice-key"}).want(200, "").json()
	if got := page["entries"].([]any)[0].(map[string]any)["version"]; got != v1 {
		t.Fatalf("second page %v, want v1", page)
	}

	ver := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/versions/main/MEMORY.md?v=" + v1, key: "alice-key"}).want(200, "").json()
	if ver["content"] != "a\nb\nc\n" {
		t.Fatalf("version %v", ver)
	}
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/versions/main/MEMORY.md?v=nope", key: "alice-key"}).want(404, "not-found")
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/versions/main/MEMORY.md", key: "alice-key"}).want(400, "invalid-parameter")

	d := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/diff/main/MEMORY.md?from=" + v1, key: "alice-key"}).want(200, "").json()
	wantDiff := "--- main/MEMORY.md@" + v1 + "\n+++ main/MEMORY.md@" + v2 + "\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if d["diff"] != wantDiff {
		t.Fatalf("diff %q, want %q", d["diff"], wantDiff)
	}
	d = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/diff/main/MEMORY.md?from=" + v2 + "&to=" + v2, key: "alice-key"}).want(200, "").json()
	if d["diff"] != "" {
		t.Fatalf("diff of a version with itself %q", d["diff"])
	}

	// Restore v1: needs a precondition; stale 412; a double submit restores once.
	restore := func(headers ...string) resp {
		return e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/MEMORY.md", key: "alice-key", body: `{"version": "` + v1 + `"}`, headers: headers})
	}
	restore().want(428, "precondition-required")
	restore("If-Match: "+ETag(v1)).want(412, "precondition-failed")
	a := restore("If-Match: "+ETag(v2), "Idempotency-Key: r-1").want(200, "")
	b := restore("If-Match: "+ETag(v2), "Idempotency-Key: r-1").want(200, "")
	if a.Body.String() != b.Body.String() || b.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("double restore: %s then %s", a.Body, b.Body)
	}
	f, _ := e.s.Read(t.Context(), "alice/main/MEMORY.md", 100)
	if f.Content != "a\nb\nc\n" || f.Metadata[store.RestoredFromKey] != v1 || f.Metadata[UpdatedByKey] != "alice" {
		t.Fatalf("after restore %+v", f)
	}
	hist = e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history/main/MEMORY.md", key: "alice-key"}).want(200, "").json()
	if n := len(hist["entries"].([]any)); n != 3 || hist["entries"].([]any)[0].(map[string]any)["kind"] != "restore" {
		t.Fatalf("history after a double restore: %v", hist)
	}
	e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/MEMORY.md", key: "alice-key", body: `{}`, headers: []string{"If-None-Match: *"}}).want(400, "invalid-body")
	e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/MEMORY.md", key: "alice-key", body: "v", headers: []string{"Content-Type: text/plain"}}).want(415, "unsupported-media-type")

	// A store without history: 501.
	plain := newEnvOn(t, store.New(nohistory{newMemDriver(t)}, nil), nil)
	plain.do(req{method: "GET", target: "/api/v1/namespaces/alice/history", key: "alice-key"}).want(501, "history-unsupported")
}

// nohistory hides memstore's history.
type nohistory struct{ *memstore.Driver }

func (nohistory) ListHistory() {}

func TestForgetAndExport(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- one\n", Metadata: map[string]string{"updated_by": "agent"}})
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/notes/x.md", Content: "two"})
	e.s.Write(ctx, store.WriteRequest{Path: "alice-b/main/MEMORY.md", Content: "keep"})

	r := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/export", key: "alice-key"}).want(200, "")
	if r.Header().Get("Content-Type") != "application/x-tar" {
		t.Fatalf("export Content-Type %q", r.Header().Get("Content-Type"))
	}
	tr := tar.NewReader(bytes.NewReader(r.Body.Bytes()))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	man, err := archive.Check(bytes.NewReader(r.Body.Bytes()))
	if err != nil {
		t.Fatalf("the export does not check: %v", err)
	}
	if fmt.Sprint(names) != "[alice/main/MEMORY.md alice/main/notes/x.md .agentmem-manifest.json]" || man.Format != "agentmem-export/v1" || man.Prefix != "alice/" || len(man.Files) != 2 {
		t.Fatalf("archive %v, manifest %+v", names, man)
	}

	e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice", key: "admin-key"}).want(400, "confirmation-required")
	e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice?confirm=alice-b", key: "admin-key"}).want(400, "confirmation-required")
	out := e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice?confirm=alice", key: "admin-key"}).want(200, "").json()
	if out["deleted"] != float64(2) || out["kept"] != float64(0) || out["history_entries"].(float64) < 4 {
		t.Fatalf("forget %v", out)
	}
	if snapshotStore(t, e.s) == "" || e.content("alice-b/main/MEMORY.md") != "keep" || e.content("alice/main/MEMORY.md") != "<not_found>" {
		t.Fatalf("after forget: %s", snapshotStore(t, e.s))
	}
	page, err := e.s.History(ctx, store.HistoryRequest{Prefix: "alice/", Limit: 10})
	if err != nil || len(page.Entries) != 0 {
		t.Fatalf("history after forget: %v %v", page.Entries, err)
	}
}

func TestUncleanPathsRefusedBeforeRouting(t *testing.T) {
	e := newEnv(t)
	for _, target := range []string{"/api/v1/namespaces/alice/files/main/../../bob/files/x", "/api/v1//me", "/api/v1/namespaces/alice/files/main/%2e%2e/x", "/api/v1/./me"} {
		e.do(req{method: "GET", target: target, key: "alice-key"}).want(400, "invalid-path")
	}
}

func TestStripPrefixMount(t *testing.T) {
	e := newEnv(t)
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", e.h))
	hr := httptest.NewRequestWithContext(t.Context(), "PUT", "/console/api/v1/namespaces/alice/files/main/MEMORY.md", strings.NewReader(body("x")))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer alice-key")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, hr)
	if w.Code != 201 || e.content("alice/main/MEMORY.md") != "x" {
		t.Fatalf("mounted write: %d %s", w.Code, w.Body)
	}
}

func TestETagRoundTrip(t *testing.T) {
	for _, v := range []string{"01JF0000000000000000000000", "01JF~console:abc", "v/with,odd \"chars\"", "b64:x", "é"} {
		got, ok := versionOfTag(ETag(v))
		if !ok || got != v {
			t.Errorf("ETag(%q) = %s parses as %q %v", v, ETag(v), got, ok)
		}
		for i := 1; i < len(ETag(v))-1; i++ {
			if c := ETag(v)[i]; c < 0x21 || c == '"' || c > 0x7e {
				t.Errorf("ETag(%q) = %s holds %q", v, ETag(v), c)
			}
		}
	}
}

// TestPreconditionRequiredHints checks that a 428 offers If-None-Match: *
// only where it can apply: a write (to create), a restore (of a deleted
// file), never a delete.
func TestPreconditionRequiredHints(t *testing.T) {
	e := newEnv(t)
	u := aliceFile("main/MEMORY.md")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("a\n")}).want(201, "")
	detail := func(r resp) string { return r.want(428, "precondition-required").json()["detail"].(string) }
	if d := detail(e.do(req{method: "PUT", target: u, key: "alice-key", body: body("b\n")})); !strings.Contains(d, "If-None-Match: * to create") {
		t.Errorf("write: %q, want the create hint", d)
	}
	if d := detail(e.do(req{method: "DELETE", target: u, key: "alice-key"})); strings.Contains(d, "If-None-Match") || !strings.Contains(d, "If-Match") {
		t.Errorf("delete: %q, want If-Match only", d)
	}
	d := detail(e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/MEMORY.md", key: "alice-key", body: `{"version": "v"}`}))
	if strings.Contains(d, "create") || !strings.Contains(d, "If-None-Match: * when the file was deleted") {
		t.Errorf("restore: %q, want If-None-Match: * only for a deleted file", d)
	}
}
