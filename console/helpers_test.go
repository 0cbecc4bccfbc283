package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// seen records every (operation, status) a test response had, so that
// TestMain can check each against the route table and the OpenAPI
// document.
var seen = struct {
	sync.Mutex
	m map[string]map[int]bool
}{m: map[string]map[int]bool{}}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !testing.Short() {
		if err := checkSeenStatuses(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// apiRoutes are the API's routes of the route table, without the pages.
func apiRoutes() []route {
	var out []route
	for _, rt := range routes {
		if !rt.isPage() {
			out = append(out, rt)
		}
	}
	return out
}

// checkSeenStatuses fails when a response had a status its route does not
// declare (or the OpenAPI document does not list).
func checkSeenStatuses() error {
	doc, err := loadDoc()
	if err != nil {
		return err
	}
	seen.Lock()
	defer seen.Unlock()
	var bad []string
	for _, rt := range apiRoutes() {
		for st := range seen.m[rt.op] {
			if !slices.Contains(rt.statuses, st) {
				bad = append(bad, fmt.Sprintf("%s answered %d, which its route does not declare", rt.op, st))
			}
			if _, ok := doc.operation(rt.op)["responses"].(map[string]any)[fmt.Sprint(st)]; !ok {
				bad = append(bad, fmt.Sprintf("%s answered %d, which openapi.json does not document", rt.op, st))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("undeclared statuses:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

func record(op string, status int) {
	seen.Lock()
	defer seen.Unlock()
	if seen.m[op] == nil {
		seen.m[op] = map[int]bool{}
	}
	seen.m[op][status] = true
}

// Test principals: keys in the Authorization header.
var principals = map[string]Principal{
	"alice-key": {User: "alice", Client: "test"},
	"bob-key":   {User: "bob@example.com", Client: "test"},
	"admin-key": {User: "root", Admin: true, Client: "ops"},
}

func testAuth(r *http.Request) (Principal, error) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p, known := principals[key]
	if !ok || !known {
		return Principal{}, ErrUnauthenticated
	}
	return p, nil
}

type env struct {
	t *testing.T
	s *store.Store
	h *Handler
}

// newEnv serves a fresh memstore with history on.
func newEnv(t *testing.T) *env {
	t.Helper()
	s := store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	return newEnvOn(t, s, nil)
}

func newEnvOn(t *testing.T, s *store.Store, opts *Options) *env {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Authenticate == nil {
		opts.Authenticate = testAuth
	}
	h, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.observe = record
	return &env{t: t, s: s, h: h}
}

// req is one request: method, target, key, headers as "Name: value", body.
type req struct {
	method, target, key string
	headers             []string
	body                string
}

type resp struct {
	*httptest.ResponseRecorder
	t *testing.T
}

func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr := httptest.NewRequestWithContext(e.t.Context(), r.method, r.target, body)
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for _, h := range r.headers {
		k, v, _ := strings.Cut(h, ": ")
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, hr)
	return resp{w, e.t}
}

// want fails unless the status is status; for an error it also checks
// the problem details' shape and type slug.
func (r resp) want(status int, slug string) resp {
	r.t.Helper()
	if r.Code != status {
		r.t.Fatalf("status %d, want %d; body %s", r.Code, status, r.Body)
	}
	if status >= 400 {
		if ct := r.Header().Get("Content-Type"); ct != "application/problem+json" {
			r.t.Fatalf("Content-Type %q, want application/problem+json", ct)
		}
		var p map[string]any
		if err := json.Unmarshal(r.Body.Bytes(), &p); err != nil {
			r.t.Fatalf("problem body %s: %v", r.Body, err)
		}
		if p["type"] != ProblemTypePrefix+slug || p["status"] != float64(status) || p["title"] == "" || p["title"] == nil {
			r.t.Fatalf("problem %v, want type %s%s status %d and a title", p, ProblemTypePrefix, slug, status)
		}
	}
	return r
}

func (r resp) json() map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body.Bytes(), &m); err != nil {
		r.t.Fatalf("body %s: %v", r.Body, err)
	}
	return m
}

func (e *env) content(p string) string {
	e.t.Helper()
	f, err := e.s.Read(e.t.Context(), p, 1<<20)
	if err != nil {
		return "<" + store.ErrorKind(err) + ">"
	}
	return f.Content
}

func body(content string) string {
	b, _ := json.Marshal(map[string]string{"content": content})
	return string(b)
}

// aliceFile is the API URL of a file of alice's.
func aliceFile(rel string) string { return "/api/v1/namespaces/alice/files/" + rel }
