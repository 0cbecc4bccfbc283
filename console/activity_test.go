package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// decode unmarshals r's body into v.
func decode[T any](r resp) T {
	r.t.Helper()
	var v T
	if err := json.Unmarshal(r.Body.Bytes(), &v); err != nil {
		r.t.Fatalf("body %s: %v", r.Body, err)
	}
	return v
}

// write writes content to p straight into e's store with md, over
// whatever p holds.
func (e *env) write(p, content string, md map[string]string) string {
	e.t.Helper()
	expected := ""
	if f, err := e.s.Read(e.t.Context(), p, 1); err == nil {
		expected = f.Version
	}
	m, err := e.s.Write(e.t.Context(), store.WriteRequest{Path: p, Content: content, Expected: expected, Metadata: md})
	if err != nil {
		e.t.Fatal(err)
	}
	return m.Version
}

// del deletes p straight from e's store with md.
func (e *env) del(p string, md map[string]string) string {
	e.t.Helper()
	f, err := e.s.Read(e.t.Context(), p, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.Delete(e.t.Context(), store.DeleteRequest{Path: p, Expected: f.Version, Metadata: md}); err != nil {
		e.t.Fatal(err)
	}
	return f.Version
}

// TestDeletedFiles lists what was deleted while history was kept: only
// files absent now whose newest change is a delete, the newest delete
// first, with who, via what, why and the version to restore; paging by
// cursor; a restore through the API brings back the exact content, once,
// and the file leaves the listing.
func TestDeletedFiles(t *testing.T) {
	e := newEnv(t)
	u := "/api/v1/namespaces/alice/deleted"
	if got := decode[DeletedPageJSON](e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, "")); len(got.Files) != 0 || !got.Recording {
		t.Fatalf("an empty namespace: %+v, want no file, recording", got)
	}
	oldContent := "- first words\n- ünïcode counts in runes\n"
	e.write("alice/main/old.md", oldContent, map[string]string{UpdatedByKey: "alice", ClientKey: "mcp"})
	e.do(req{method: "DELETE", target: aliceFile("main/old.md"), key: "alice-key", headers: []string{"If-Match: " + ETag(e.versionOf("alice/main/old.md"))}}).want(204, "")
	e.write("alice/main/log-1.md", "rotated\n", map[string]string{UpdatedByKey: "alice"})
	e.del("alice/main/log-1.md", map[string]string{UpdatedByKey: pruned.RetentionUpdatedBy, pruned.RetentionReasonKey: "over max_files"})
	// Deleted, then written again: not deleted.
	e.write("alice/main/back.md", "v1\n", nil)
	e.del("alice/main/back.md", nil)
	e.write("alice/main/back.md", "v2\n", nil)
	e.write("alice/main/kept.md", "kept\n", nil)
	e.write("bob_40example.com/main/gone.md", "bob's\n", nil)
	e.del("bob_40example.com/main/gone.md", nil)

	page := decode[DeletedPageJSON](e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, ""))
	var paths []string
	for _, f := range page.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"main/log-1.md", "main/old.md"}) || page.NextCursor != "" || page.Truncated {
		t.Fatalf("deleted %v (next %q, truncated %v), want the rotated log then old.md, newest delete first, on one page", paths, page.NextCursor, page.Truncated)
	}
	rot, old := page.Files[0], page.Files[1]
	if rot.Metadata[UpdatedByKey] != pruned.RetentionUpdatedBy || rot.Metadata[pruned.RetentionReasonKey] != "over max_files" || rot.Time == nil {
		t.Errorf("the rotated log's delete %+v: want who, why and when", rot)
	}
	if old.Metadata[UpdatedByKey] != "alice" || old.Metadata[ClientKey] != "test" || !old.Restorable || old.Chars != utf8.RuneCountInString(oldContent) || old.Previous == "" {
		t.Errorf("old.md's delete %+v: want alice via test, restorable, its characters", old)
	}

	// Paging: one a page, the cursor continues; another listing's cursor
	// and a made-up one are refused.
	first := decode[DeletedPageJSON](e.do(req{method: "GET", target: u + "?limit=1", key: "alice-key"}).want(200, ""))
	if len(first.Files) != 1 || first.Files[0].Path != "main/log-1.md" || first.NextCursor == "" {
		t.Fatalf("page 1: %+v", first)
	}
	second := decode[DeletedPageJSON](e.do(req{method: "GET", target: u + "?limit=1&cursor=" + url.QueryEscape(first.NextCursor), key: "alice-key"}).want(200, ""))
	if len(second.Files) != 1 || second.Files[0].Path != "main/old.md" || second.NextCursor != "" {
		t.Fatalf("page 2: %+v", second)
	}
	e.do(req{method: "GET", target: u + "?cursor=" + makeCursor("history", "alice", "x"), key: "alice-key"}).want(400, "invalid-cursor")
	e.do(req{method: "GET", target: u + "?cursor=" + makeCursor("deleted", "alice", "yesterday main/x.md"), key: "alice-key"}).want(400, "invalid-cursor")
	// Another user's namespace is not there.
	e.do(req{method: "GET", target: "/api/v1/namespaces/bob_40example.com/deleted", key: "alice-key"}).want(404, "namespace-not-found")

	// Restore what the listing names, over no file, exactly once.
	rb := `{"version":"` + old.Previous + `"}`
	restore := req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/old.md", key: "alice-key", body: rb,
		headers: []string{"If-None-Match: *", "Idempotency-Key: undelete-1"}}
	e.do(restore).want(200, "")
	e.do(restore).want(200, "")
	if got := e.content("alice/main/old.md"); got != oldContent {
		t.Fatalf("restored content %q, want %q", got, oldContent)
	}
	var kinds []string
	for _, h := range e.history(store.HistoryRequest{Path: "alice/main/old.md"}).Entries {
		kinds = append(kinds, (&call{ns: "alice"}).entry(&h).Kind)
	}
	if !slices.Equal(kinds, []string{"restore", "delete", "write"}) {
		t.Errorf("old.md's history %v, want the write, the delete and one restore", kinds)
	}
	page = decode[DeletedPageJSON](e.do(req{method: "GET", target: u, key: "alice-key"}).want(200, ""))
	if len(page.Files) != 1 || page.Files[0].Path != "main/log-1.md" {
		t.Errorf("after the restore: %+v, want only the rotated log", page.Files)
	}
}

// versionOf is the current version of p, for an If-Match.
func (e *env) versionOf(p string) string {
	e.t.Helper()
	f, err := e.s.Read(e.t.Context(), p, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	return f.Version
}

// TestDeletedNotRestorable: a file written while history was off, then
// deleted with it on, is listed (its delete is recorded) but cannot be
// restored: its content was never kept; one written again while history
// was off is not deleted.
func TestDeletedNotRestorable(t *testing.T) {
	d := newMemDriver(t)
	off := store.New(d, nil)
	if _, err := off.Write(t.Context(), store.WriteRequest{Path: "alice/main/a.md", Content: "unrecorded\n"}); err != nil {
		t.Fatal(err)
	}
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, nil)
	e.del("alice/main/a.md", map[string]string{UpdatedByKey: "alice"})
	// Deleted with history on, written again with it off: not deleted.
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "alice/main/b.md", Content: "b\n"}); err != nil {
		t.Fatal(err)
	}
	e.del("alice/main/b.md", nil)
	if _, err := off.Write(t.Context(), store.WriteRequest{Path: "alice/main/b.md", Content: "b again\n"}); err != nil {
		t.Fatal(err)
	}
	page := decode[DeletedPageJSON](e.do(req{method: "GET", target: "/api/v1/namespaces/alice/deleted", key: "alice-key"}).want(200, ""))
	if len(page.Files) != 1 || page.Files[0].Restorable || page.Files[0].Chars != 0 {
		t.Fatalf("%+v, want a.md listed, not restorable, and not b.md", page.Files)
	}
	cookie := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/deleted", cookie: cookie})
	wantStatus(t, w, http.StatusOK)
	if strings.Contains(w.Body.String(), `action="/ns/alice/restore"`) || !strings.Contains(w.Body.String(), "its content expired from history") {
		t.Errorf("the page offers a restore it cannot make:\n%s", w.Body)
	}
}

// TestHistoryPagesWithoutHistory: on a backend that keeps no history the
// API answers 501 and the pages say so and how to turn it on; on one that
// keeps it with history off they list what was recorded and say that
// nothing is recorded now.
func TestHistoryPagesWithoutHistory(t *testing.T) {
	none := newEnvOn(t, store.New(nohistory{newMemDriver(t)}, nil), nil)
	none.do(req{method: "GET", target: "/api/v1/namespaces/alice/deleted", key: "alice-key"}).want(501, "history-unsupported")
	none.do(req{method: "GET", target: "/api/v1/namespaces/alice/activity", key: "alice-key"}).want(501, "history-unsupported")
	cookie := none.signIn("alice-key")
	for _, p := range []string{"deleted", "activity"} {
		w := none.page(pageReq{method: "GET", target: "/ns/alice/" + p, cookie: cookie})
		wantStatus(t, w, http.StatusOK)
		if b := w.Body.String(); !strings.Contains(b, "keeps no history") || !strings.Contains(b, "?history=on") {
			t.Errorf("%s without history does not say so and how to turn it on:\n%s", p, b)
		}
	}

	off := newEnvOn(t, store.New(newMemDriver(t), nil), nil)
	got := decode[DeletedPageJSON](off.do(req{method: "GET", target: "/api/v1/namespaces/alice/deleted", key: "alice-key"}).want(200, ""))
	if got.Recording {
		t.Error("a store with history off says it records")
	}
	cookie = off.signIn("alice-key")
	for _, p := range []string{"deleted", "activity"} {
		w := off.page(pageReq{method: "GET", target: "/ns/alice/" + p, cookie: cookie})
		wantStatus(t, w, http.StatusOK)
		if b := w.Body.String(); !strings.Contains(b, "records no history now") || !strings.Contains(b, "?history=on") {
			t.Errorf("%s with history off does not say so:\n%s", p, b)
		}
	}
}

// TestDeletedPageRestore: the deleted page's restore form brings back the
// exact content once, however often it is submitted, and the restore is
// recorded; the file leaves the page.
func TestDeletedPageRestore(t *testing.T) {
	e := newEnv(t)
	content := "# Plans\n\n- move to Da Nang\n"
	e.write("alice/main/plans.md", content, map[string]string{UpdatedByKey: "alice", ClientKey: "mcp"})
	e.del("alice/main/plans.md", map[string]string{UpdatedByKey: "alice", ClientKey: "mcp", "tool_call_id": "call-7"})
	cookie := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/deleted", cookie: cookie})
	wantStatus(t, w, http.StatusOK)
	b := w.Body.String()
	for _, want := range []string{"main/plans.md", "alice", "via mcp", "tool_call_id=call-7", `action="/ns/alice/restore"`} {
		if !strings.Contains(b, want) {
			t.Errorf("the deleted page lacks %q:\n%s", want, b)
		}
	}
	form := url.Values{}
	for _, n := range []string{"path", "version", "current", "token"} {
		form.Set(n, hidden(t, b, n))
	}
	for range 2 { // a double submit
		w = e.page(pageReq{method: "POST", target: "/ns/alice/restore", cookie: cookie, form: form})
		wantStatus(t, w, http.StatusSeeOther)
	}
	if got := e.content("alice/main/plans.md"); got != content {
		t.Fatalf("restored %q, want %q", got, content)
	}
	h := e.history(store.HistoryRequest{Path: "alice/main/plans.md"}).Entries
	if len(h) != 3 || h[0].Metadata[store.RestoredFromKey] != form.Get("version") || h[0].Metadata[ClientKey] != "console" || !h[1].Deleted {
		t.Fatalf("history %+v, want the write, the delete and one restore by the console", h)
	}
	w = e.page(pageReq{method: "GET", target: "/ns/alice/deleted", cookie: cookie})
	if strings.Contains(w.Body.String(), "main/plans.md") {
		t.Error("a restored file is still listed as deleted")
	}
}

// TestActivity counts the namespace's history by client and by user and
// checks every count against the history read through the API (not
// against numbers written here), then the page shows the same.
func TestActivity(t *testing.T) {
	e := newEnv(t)
	by := func(user, client string) map[string]string {
		md := map[string]string{UpdatedByKey: user}
		if client != "" {
			md[ClientKey] = client
		}
		return md
	}
	e.write("alice/main/MEMORY.md", "- a\n", by("alice", "claude-code"))
	e.write("alice/main/MEMORY.md", "- a\n- b\n", by("alice", "claude-code"))
	e.write("alice/main/notes.md", "notes\n", by("kamal", "")) // the CLI records no client
	e.write("alice/main/MEMORY.md", "- a\n- c\n", by(pruned.ConsolidatorName+"/scripted-1", "console"))
	e.do(req{method: "PUT", target: aliceFile("main/api.md"), key: "alice-key", body: body("x"), headers: []string{"If-None-Match: *"}}).want(201, "")
	v := e.del("alice/main/notes.md", by("kamal", ""))
	e.do(req{method: "POST", target: "/api/v1/namespaces/alice/restore/main/notes.md", key: "admin-key", body: `{"version":"` + v + `"}`,
		headers: []string{"If-None-Match: *"}}).want(200, "")
	e.write("bob_40example.com/main/MEMORY.md", "bob\n", by("bob", "mcp"))

	// The history as the API lists it, counted here.
	type tally struct {
		changes, writes, deletes, restores int
		last                               time.Time
	}
	clients, users := map[string]*tally{}, map[string]*tally{}
	var entries []EntryJSON
	cursor := ""
	for {
		target := "/api/v1/namespaces/alice/history?limit=2"
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		page := decode[HistoryJSON](e.do(req{method: "GET", target: target, key: "alice-key"}).want(200, ""))
		entries = append(entries, page.Entries...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	add := func(m map[string]*tally, k string, en EntryJSON) {
		kind := en.Kind
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].changes++
		if en.Time.After(m[k].last) {
			m[k].last = *en.Time
		}
		switch kind {
		case "write":
			m[k].writes++
		case "delete":
			m[k].deletes++
		case "restore":
			m[k].restores++
		}
	}
	for _, en := range entries {
		client := en.Metadata[ClientKey]
		if strings.HasPrefix(en.Metadata[UpdatedByKey], "agentmem-consolidator/") {
			client = "consolidator"
		}
		add(clients, client, en)
		add(users, en.Metadata[UpdatedByKey], en)
	}

	a := decode[ActivityJSON](e.do(req{method: "GET", target: "/api/v1/namespaces/alice/activity", key: "alice-key"}).want(200, ""))
	if a.Changes != len(entries) || !a.Recording || a.Truncated {
		t.Fatalf("activity counts %d changes (recording %v, truncated %v), the history holds %d", a.Changes, a.Recording, a.Truncated, len(entries))
	}
	check := func(what string, got []CountJSON, want map[string]*tally) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d rows %+v, the history has %d", what, len(got), got, len(want))
		}
		for i, c := range got {
			w := want[c.Name]
			if w == nil || c.Changes != w.changes || c.Writes != w.writes || c.Deletes != w.deletes || c.Restores != w.restores {
				t.Errorf("%s %q: %+v, the history has %+v", what, c.Name, c, w)
			}
			if c.LastChange == nil || w != nil && !c.LastChange.Equal(w.last) || c.LastPath == "" {
				t.Errorf("%s %q: last change %v at %q, the history's is %v", what, c.Name, c.LastChange, c.LastPath, w)
			}
			if i > 0 && got[i-1].Changes < c.Changes {
				t.Errorf("%s not ordered by changes: %+v", what, got)
			}
		}
	}
	check("clients", a.Clients, clients)
	check("users", a.Users, users)
	for _, name := range []string{"claude-code", "consolidator", "test", "ops", ""} {
		if clients[name] == nil {
			t.Errorf("the seeded history has no client %q: the test is off", name)
		}
	}
	// The newest change first: the admin's restore.
	if len(a.Recent) != len(entries) || a.Recent[0].Kind != "restore" || a.Recent[0].Path != "main/notes.md" {
		t.Errorf("recent %+v, want every change, the restore first", a.Recent)
	}
	for i := 1; i < len(a.Recent); i++ {
		if a.Recent[i].Time.After(*a.Recent[i-1].Time) {
			t.Errorf("recent not newest first at %d", i)
		}
	}
	if got := decode[ActivityJSON](e.do(req{method: "GET", target: "/api/v1/namespaces/alice/activity?limit=2", key: "alice-key"}).want(200, "")); len(got.Recent) != 2 || got.Changes != a.Changes {
		t.Errorf("?limit=2: %d recent, %d changes", len(got.Recent), got.Changes)
	}

	// A scan cut short says so.
	historyScanLimit = 3
	cut := decode[ActivityJSON](e.do(req{method: "GET", target: "/api/v1/namespaces/alice/activity", key: "alice-key"}).want(200, ""))
	historyScanLimit = MaxHistoryScan
	if !cut.Truncated || cut.Changes != 3 {
		t.Errorf("a scan of 3: %d changes, truncated %v", cut.Changes, cut.Truncated)
	}

	cookie := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/activity", cookie: cookie})
	wantStatus(t, w, http.StatusOK)
	b := w.Body.String()
	for _, c := range a.Clients {
		name := c.Name
		if name == "" {
			name = "none recorded"
		}
		if !strings.Contains(b, name+"</") {
			t.Errorf("the page lacks client %q", name)
		}
	}
	if !strings.Contains(b, `<td class="num changes">`+strconv.Itoa(clients["claude-code"].changes)+`</td>`) {
		t.Errorf("the page lacks claude-code's count:\n%s", b)
	}
}

// TestNamespaceDescribed: a namespace's description has its size, the
// tokens of its MEMORY.md by the notebook's estimate, and who made its
// last change through what.
func TestNamespaceDescribed(t *testing.T) {
	e := newEnv(t)
	main := strings.Repeat("é", 9) // 9 characters, 18 bytes: 3 tokens
	e.write("alice/main/MEMORY.md", main, map[string]string{UpdatedByKey: "alice", ClientKey: "mcp"})
	e.write("alice/main/t.md", "12345", map[string]string{UpdatedByKey: "kamal"})
	d := decode[NamespaceJSON](e.do(req{method: "GET", target: "/api/v1/namespaces/alice", key: "alice-key"}).want(200, ""))
	if d.Files != 2 || d.Chars != 14 || d.MemoryTokens != 3 || d.LastBy != "kamal" || d.LastClient != "" || d.LastChange == nil {
		t.Fatalf("%+v, want 2 files, 14 characters, 3 tokens, last by kamal without a client", d)
	}
	cookie := e.signIn("admin-key")
	w := e.page(pageReq{method: "GET", target: "/", cookie: cookie})
	wantStatus(t, w, http.StatusOK)
	if b := w.Body.String(); !strings.Contains(b, `<td class="qty tokens">3</td>`) || !strings.Contains(b, "kamal") {
		t.Errorf("the namespaces page lacks the tokens or who wrote last:\n%s", b)
	}
}
