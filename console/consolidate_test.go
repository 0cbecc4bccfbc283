package console

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// scriptedModel is a consolidation model that answers its answers in
// order (the last one again once they run out), or fails with err, and
// counts the requests.
type scriptedModel struct {
	mu      sync.Mutex
	answers []string
	err     error
	asked   int
}

func (m *scriptedModel) generate(_ context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.asked
	m.asked++
	if m.err != nil {
		return pruned.ModelResponse{}, m.err
	}
	text := m.answers[min(n, len(m.answers)-1)]
	return pruned.ModelResponse{Text: text, Model: "scripted-1", Usage: pruned.Usage{InputTokens: len(req.User) / 4, OutputTokens: len(text) / 4}}, nil
}

func (m *scriptedModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked
}

func (m *scriptedModel) set(err error, answers ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = err
	if answers != nil {
		m.answers = answers
	}
}

// editsAnswer renders a model answer of edits, as core/memory parses it.
func editsAnswer(es ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"edits": es})
	return string(b)
}

func appendOf(file any, content string) map[string]any {
	return map[string]any{"file": file, "content": content, "old_text": nil}
}

func replaceOf(file any, old, content string) map[string]any {
	return map[string]any{"file": file, "content": content, "old_text": old}
}

const consolidatePruned = "- user (2025-06-01T09:00:00Z): I moved from Hanoi to Da Nang last month.\n" +
	"- user (2025-06-01T09:01:00Z): Book me a window seat, always.\n"

// consolidateAnswer updates a stale fact, appends one and writes a topic
// file.
var consolidateAnswer = editsAnswer(
	replaceOf(nil, "- lives in Hanoi", "- lives in Da Nang (moved 2025-05)"),
	appendOf("MEMORY.md", "- prefers window seats; see travel.md"),
	appendOf("travel.md", "# Travel\n- window seat, always"),
)

const consolidatedMemory = "- lives in Da Nang (moved 2025-05)\n- prefers window seats; see travel.md\n"

// newConsolidateEnv serves a store with history and a scripted
// consolidator, alice's notebook seeded with a stale fact and pruned
// history.
func newConsolidateEnv(t *testing.T, answers ...string) (*env, *scriptedModel) {
	t.Helper()
	m := &scriptedModel{answers: answers}
	s := store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, &Options{Consolidator: pruned.ModelFunc(m.generate),
		ConsolidateOptions: &pruned.ConsolidateOptions{Metadata: map[string]string{"origin": "ops"}}})
	e.seed("alice/main/MEMORY.md", "- lives in Hanoi\n")
	e.seed("alice/main/pruned.md", consolidatePruned)
	return e, m
}

// files is every path under prefix with its version: what a request
// wrote shows as a difference. The console's records of keyed requests
// are left out.
func (e *env) files(prefix string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for p, err := range e.s.Walk(e.t.Context(), prefix, 0) {
		if err != nil {
			e.t.Fatal(err)
		}
		if strings.Contains(p, "/"+pruned.StateDir+"/"+recordDir+"/") {
			continue
		}
		f, err := e.s.Read(e.t.Context(), p, 1)
		if err != nil {
			e.t.Fatal(err)
		}
		out[p] = f.Version
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%s: files %v, want %v (unchanged)", what, after, before)
	}
	for p, v := range before {
		if after[p] != v {
			t.Fatalf("%s: %s changed (%q → %q)", what, p, v, after[p])
		}
	}
}

func consolidateReq(ns, key, query string, headers ...string) req {
	return req{method: "POST", target: "/api/v1/namespaces/" + ns + "/consolidate" + query, key: key, headers: headers}
}

func TestConsolidateDryRunWritesNothing(t *testing.T) {
	e, m := newConsolidateEnv(t, consolidateAnswer)
	before := e.files("alice/")
	out := e.do(consolidateReq("alice", "alice-key", "?dry_run=1", "Idempotency-Key: d-1")).want(200, "").json()
	if out["dry_run"] != true || out["edits"] != float64(3) || out["applied"] != float64(0) || out["runs"] != float64(1) {
		t.Fatalf("dry run answered %v", out)
	}
	diff, _ := out["diff"].(string)
	for _, want := range []string{"--- a/MEMORY.md", "-- lives in Hanoi", "+- lives in Da Nang (moved 2025-05)", "+++ b/travel.md"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if files := out["files"].([]any); len(files) != 2 || files[0] != "main/MEMORY.md" || files[1] != "main/travel.md" {
		t.Errorf("files %v, want main/MEMORY.md and main/travel.md", files)
	}
	if u := out["usage"].(map[string]any); u["input_tokens"].(float64) <= 0 || out["model"] != "scripted-1" || out["asks"] != float64(1) {
		t.Errorf("usage %v, model %v, asks %v", u, out["model"], out["asks"])
	}
	sameFiles(t, "after a dry run", before, e.files("alice/"))
	// A dry run asks again each time (it stores no plan) and still writes nothing.
	e.do(consolidateReq("alice", "alice-key", "?dry_run=1", "Idempotency-Key: d-1")).want(200, "")
	sameFiles(t, "after a second dry run", before, e.files("alice/"))
	if ps, err := e.s.ListPaths(t.Context(), "alice/main/"+pruned.StateDir+"/", 10); err != nil || len(ps) != 0 {
		t.Fatalf("a dry run wrote %v (%v)", ps, err)
	}
	if m.requests() != 2 {
		t.Fatalf("model asked %d times, want 2", m.requests())
	}
	e.do(consolidateReq("alice", "alice-key", "?dry_run=maybe")).want(400, "invalid-parameter")
}

func TestConsolidateAppliesOncePerIdempotencyKey(t *testing.T) {
	e, m := newConsolidateEnv(t, consolidateAnswer, editsAnswer(appendOf("MEMORY.md", "- second round")))
	first := e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: c-1")).want(200, "")
	out := first.json()
	if out["applied"] != float64(3) || out["replayed"] != float64(0) || out["dry_run"] != false || out["requested_by"] != "alice" {
		t.Fatalf("apply answered %v", out)
	}
	if got := e.content("alice/main/MEMORY.md"); got != consolidatedMemory {
		t.Fatalf("MEMORY.md = %q, want %q", got, consolidatedMemory)
	}
	f, err := e.s.Read(t.Context(), "alice/main/MEMORY.md", 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{UpdatedByKey: pruned.ConsolidatorName + "/scripted-1", pruned.ModelKey: "scripted-1",
		RequestedByKey: "alice", ClientKey: "test", "origin": "ops"} {
		if f.Metadata[k] != want {
			t.Errorf("MEMORY.md metadata %s = %q, want %q (all: %v)", k, f.Metadata[k], want, f.Metadata)
		}
	}
	asked := m.requests()
	// New pruned text arrives; the retry must answer the same and consolidate nothing.
	if _, err := memory.Append(t.Context(), e.s, "alice/main/pruned.md", "- user: I now drink tea, not coffee.\n", nil); err != nil {
		t.Fatal(err)
	}
	before := e.files("alice/")
	again := e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: c-1")).want(200, "")
	if again.Body.String() != first.Body.String() || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry answered %s (Idempotent-Replayed %q), want the first answer %s", again.Body, again.Header().Get("Idempotent-Replayed"), first.Body)
	}
	sameFiles(t, "after the retry", before, e.files("alice/"))
	if m.requests() != asked {
		t.Fatalf("the retry asked the model (%d requests, want %d)", m.requests(), asked)
	}
	// The key with another request, or another route's key, is refused before the model is asked.
	e.do(consolidateReq("alice", "alice-key", "?dry_run=0", "Idempotency-Key: c-1")).want(200, "") // same request: dry_run=0 is the default
	e.do(req{method: "PUT", target: aliceFile("main/x.md"), key: "alice-key", body: body("x"), headers: []string{"Idempotency-Key: c-1"}}).want(422, "idempotency-key-reused")
	e.do(req{method: "PUT", target: aliceFile("main/y.md"), key: "alice-key", body: body("y"), headers: []string{"Idempotency-Key: p-1"}}).want(201, "")
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: p-1")).want(422, "idempotency-key-reused")
	if m.requests() != asked {
		t.Fatalf("a refused key asked the model")
	}
	// A new key consolidates what arrived since.
	next := e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: c-2")).want(200, "").json()
	if next["applied"] != float64(1) || !strings.HasSuffix(e.content("alice/main/MEMORY.md"), "- second round\n") {
		t.Fatalf("second consolidation answered %v, MEMORY.md %q", next, e.content("alice/main/MEMORY.md"))
	}
	// Nothing pruned since: nothing to do.
	idle := e.do(consolidateReq("alice", "alice-key", "")).want(200, "").json()
	if idle["pruned_chars"] != float64(0) || idle["applied"] != float64(0) || idle["edits"] != float64(0) {
		t.Fatalf("nothing pruned answered %v", idle)
	}
	// The consolidator's change shows in the history, and who asked.
	for _, en := range e.history(store.HistoryRequest{Path: "alice/main/travel.md"}).Entries {
		if en.Metadata[UpdatedByKey] != pruned.ConsolidatorName+"/scripted-1" || en.Metadata[RequestedByKey] != "alice" {
			t.Fatalf("history entry metadata %v", en.Metadata)
		}
	}
}

// A request that failed (the model down) leaves its key open: the retry
// runs and applies.
func TestConsolidateRetryAfterFailure(t *testing.T) {
	e, m := newConsolidateEnv(t, consolidateAnswer)
	m.set(errors.New("upstream 529 overloaded"))
	before := e.files("alice/main/")
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-1")).want(502, "model-failed")
	sameFiles(t, "after the model failed", before, e.files("alice/main/"))
	m.set(nil)
	out := e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-1")).want(200, "").json()
	if out["applied"] != float64(3) || e.content("alice/main/MEMORY.md") != consolidatedMemory {
		t.Fatalf("retry answered %v", out)
	}
}

func TestConsolidateModelAnswerInvalid(t *testing.T) {
	e, m := newConsolidateEnv(t, "Sure! Here are the edits you asked for.")
	before := e.files("alice/")
	e.do(consolidateReq("alice", "alice-key", "")).want(502, "model-answer-invalid")
	m.set(nil, editsAnswer(replaceOf(nil, "- a passage that is not there", "x")))
	e.do(consolidateReq("alice", "alice-key", "?dry_run=1")).want(502, "model-answer-invalid")
	sameFiles(t, "after invalid answers", before, e.files("alice/"))
}

func TestConsolidateStateInvalid(t *testing.T) {
	e, _ := newConsolidateEnv(t, consolidateAnswer)
	e.seed("alice/main/"+pruned.StateDir+"/pruned.md.json", "not the library's\n")
	e.do(consolidateReq("alice", "alice-key", "")).want(409, "consolidation-state-invalid")
}

func TestConsolidateAccess(t *testing.T) {
	e, m := newConsolidateEnv(t, consolidateAnswer)
	e.do(consolidateReq("alice", "bob-key", "")).want(404, "namespace-not-found")
	e.do(consolidateReq("alice", "", "")).want(401, "unauthenticated")
	if m.requests() != 0 {
		t.Fatal("a refused principal asked the model")
	}
	out := e.do(consolidateReq("alice", "admin-key", "")).want(200, "").json()
	if out["applied"] != float64(3) || out["requested_by"] != "root" {
		t.Fatalf("admin apply answered %v", out)
	}
	e.do(req{method: "GET", target: "/api/v1/namespaces/alice/consolidate", key: "alice-key"}).want(405, "method-not-allowed")
}

func TestConsolidateNotConfigured(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/pruned.md", consolidatePruned)
	p := e.do(consolidateReq("alice", "alice-key", "")).want(501, "consolidation-not-configured").json()
	// The detail names what the server's operator sets, not a Go option.
	if d, _ := p["detail"].(string); !strings.Contains(d, "agentmem serve --model") || strings.Contains(d, "Options") {
		t.Fatalf("detail %q, want the serve flag that turns consolidation on", d)
	}
	e.do(consolidateReq("alice", "alice-key", "?dry_run=1")).want(501, "consolidation-not-configured")
	ck := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ck})
	wantStatus(t, w, http.StatusOK)
	if strings.Contains(w.Body.String(), "Consolidate") {
		t.Fatal("the notebook page offers consolidation without a model")
	}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: url.Values{"token": {"t"}, "mode": {"apply"}}}), http.StatusNotImplemented)
}

func TestNewRefusesBadConsolidateMetadata(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	_, err := New(s, &Options{Authenticate: testAuth, ConsolidateOptions: &pruned.ConsolidateOptions{Metadata: map[string]string{"k": "a\x00b"}}})
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("New = %v, want ErrOptions", err)
	}
}

// The page's Preview shows the proposal and writes nothing; Apply asks
// again and shows what it applied (here the model answers differently);
// a double submit of the Apply form applies once.
func TestPagesConsolidate(t *testing.T) {
	other := editsAnswer(appendOf("MEMORY.md", "- moved to Da Nang"))
	e, m := newConsolidateEnv(t, consolidateAnswer, other)
	ck := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: ck})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), "Consolidate now") || !strings.Contains(w.Body.String(), `value="preview"`) {
		t.Fatalf("the notebook page has no consolidate form:\n%s", w.Body)
	}
	token := hidden(t, w.Body.String(), "token")
	before := e.files("alice/")
	w = e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: url.Values{"token": {token}, "mode": {"preview"}}})
	wantStatus(t, w, http.StatusOK)
	page := html.UnescapeString(w.Body.String())
	for _, want := range []string{"Nothing was written", "+- lives in Da Nang (moved 2025-05)", "may differ from this preview", `name="mode" value="apply"`} {
		if !strings.Contains(page, want) {
			t.Errorf("preview page lacks %q", want)
		}
	}
	sameFiles(t, "after the preview", before, e.files("alice/"))
	apply := hidden(t, page, "token")
	form := url.Values{"token": {apply}, "mode": {"apply"}}
	w = e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: form})
	wantStatus(t, w, http.StatusOK)
	if page = html.UnescapeString(w.Body.String()); !strings.Contains(page, "1 edit applied") || !strings.Contains(page, "+- moved to Da Nang") || strings.Contains(page, "window seat") {
		t.Fatalf("apply page does not show what was applied:\n%s", page)
	}
	want := "- lives in Hanoi\n- moved to Da Nang\n"
	if got := e.content("alice/main/MEMORY.md"); got != want {
		t.Fatalf("MEMORY.md = %q, want %q", got, want)
	}
	f, err := e.s.Read(t.Context(), "alice/main/MEMORY.md", 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata[RequestedByKey] != "alice" || f.Metadata[ClientKey] != "console" || f.Metadata[UpdatedByKey] != pruned.ConsolidatorName+"/scripted-1" {
		t.Fatalf("metadata %v: want the consolidator, requested_by alice via console", f.Metadata)
	}
	asked, after := m.requests(), e.files("alice/")
	w = e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: form})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), "already submitted") || !strings.Contains(w.Body.String(), "1 edit applied") {
		t.Fatalf("double submit page:\n%s", w.Body)
	}
	sameFiles(t, "after a double submit", after, e.files("alice/"))
	if m.requests() != asked {
		t.Fatal("a double submit asked the model")
	}
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: url.Values{"mode": {"apply"}}}), http.StatusBadRequest)
	wantStatus(t, e.page(pageReq{method: "POST", target: "/ns/bob_40example.com/consolidate", cookie: ck, form: form}), http.StatusNotFound)
	// Nothing pruned since: the page says so.
	w = e.page(pageReq{method: "POST", target: "/ns/alice/consolidate", cookie: ck, form: url.Values{"token": {"fresh"}, "mode": {"apply"}}})
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), "nothing to consolidate") {
		t.Fatalf("idle apply page:\n%s", w.Body)
	}
}

// Concurrent requests with one key apply the edits once and all answer
// the same.
func TestConsolidateConcurrentSameKey(t *testing.T) {
	e, _ := newConsolidateEnv(t, consolidateAnswer)
	const n = 4
	bodies := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			hr := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/namespaces/alice/consolidate", nil)
			hr.Header.Set("Authorization", "Bearer alice-key")
			hr.Header.Set("Idempotency-Key", "same")
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, hr)
			codes[i], bodies[i] = w.Code, w.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || bodies[i] != bodies[0] {
			t.Fatalf("request %d answered %d %s; request 0 answered %s", i, codes[i], bodies[i], bodies[0])
		}
	}
	if got := e.content("alice/main/MEMORY.md"); got != consolidatedMemory {
		t.Fatalf("MEMORY.md = %q, want %q", got, consolidatedMemory)
	}
	if h := e.history(store.HistoryRequest{Path: "alice/main/travel.md"}); len(h.Entries) != 1 {
		t.Fatalf("travel.md written %d times, want once", len(h.Entries))
	}
}

// records lists the console's records of consolidate requests in alice's
// notebook, with their metadata.
func (e *env) records() map[string]map[string]string {
	e.t.Helper()
	out := map[string]map[string]string{}
	for p, err := range e.s.Walk(e.t.Context(), recordsOf("alice"), 0) {
		if err != nil {
			e.t.Fatal(err)
		}
		f, err := e.s.Read(e.t.Context(), p, 1)
		if err != nil {
			e.t.Fatal(err)
		}
		out[p] = f.Metadata
	}
	return out
}

func recordsOf(ns string) string {
	return ns + "/" + memory.DefaultAgentName + "/" + pruned.StateDir + "/" + recordDir + "/"
}

// TestConsolidateRecordRetention: each new record of a keyed consolidate
// request deletes the notebook's records older than the retention, as
// rotation's retention deletes a series' old files (recorded with
// updated_by agentmem-retention and the reason); a record made before
// records had a time gets one, and goes one retention later.
func TestConsolidateRecordRetention(t *testing.T) {
	e, _ := newConsolidateEnv(t, consolidateAnswer)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := t0
	e.h.now = func() time.Time { return clock }
	day := 24 * time.Hour
	legacy := recordsOf("alice") + "0123456789abcdef0123456789abcdef01234567.json"
	e.seed(legacy, `{"fingerprint":"f","done":false}`+"\n")

	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-1")).want(200, "")
	recs := e.records()
	if len(recs) != 2 {
		t.Fatalf("records %v, want r-1's and the legacy one", recs)
	}
	var first string
	for p, md := range recs {
		if p != legacy {
			first = p
			if md[RecordedAtKey] != "2026-01-01T12:00:00Z" {
				t.Fatalf("record %s has %s=%q, want the request's time", p, RecordedAtKey, md[RecordedAtKey])
			}
		}
	}
	if recs[legacy][RecordedAtKey] != "2026-01-01T12:00:00Z" {
		t.Fatalf("the legacy record was not given a time: %v", recs[legacy])
	}

	// Within the retention: kept.
	clock = t0.Add(DefaultConsolidateRecordRetention)
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-2")).want(200, "")
	if recs := e.records(); len(recs) != 3 || recs[first] == nil || recs[legacy] == nil {
		t.Fatalf("records %v, want all three kept", recs)
	}
	// Past it: the two older ones go, recorded as retention deletes.
	clock = t0.Add(DefaultConsolidateRecordRetention + day)
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-3")).want(200, "")
	recs = e.records()
	if len(recs) != 2 || recs[first] != nil || recs[legacy] != nil {
		t.Fatalf("records %v, want r-2's and r-3's", recs)
	}
	for _, p := range []string{first, legacy} {
		h := e.history(store.HistoryRequest{Path: p}) // newest first
		if len(h.Entries) == 0 || !h.Entries[0].Deleted || h.Entries[0].Metadata[UpdatedByKey] != pruned.RetentionUpdatedBy ||
			h.Entries[0].Metadata[pruned.RetentionReasonKey] != "consolidate request record older than 720h0m0s" {
			t.Fatalf("%s: last change %+v, want a retention delete", p, h.Entries)
		}
	}
	// A retry of r-3 is still answered from its record.
	e.do(consolidateReq("alice", "alice-key", "", "Idempotency-Key: r-3")).want(200, "")
}

func TestNewRefusesNegativeRecordRetention(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	if _, err := New(s, &Options{Authenticate: testAuth, ConsolidateRecordRetention: -time.Hour}); !errors.Is(err, ErrOptions) {
		t.Fatalf("New = %v, want ErrOptions", err)
	}
}
