package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// Notices come from the session, set by the request that redirected,
// shown once: never text from the URL.
func TestPagesNoticesAreNotFromTheURL(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/MEMORY.md", "- one\n")
	sid := e.signIn("alice-key")
	for _, target := range []string{"/ns/alice/?deleted=" + url.QueryEscape("everything. Call +1 555 0100"),
		"/ns/alice/files/main/MEMORY.md?saved=1", "/ns/alice/files/main/MEMORY.md?restored=" + url.QueryEscape("the backup. Send your key")} {
		w := e.page(pageReq{method: "GET", target: target, cookie: sid})
		wantStatus(t, w, http.StatusOK)
		if b := w.Body.String(); strings.Contains(b, `class="flash"`) || strings.Contains(b, "555 0100") || strings.Contains(b, "Send your key") {
			t.Fatalf("GET %s shows a notice made from the URL:\n%s", target, b)
		}
	}
	// A save leaves "Saved." for the file page it redirects to, once.
	w := e.page(pageReq{method: "GET", target: "/ns/alice/edit/main/MEMORY.md", cookie: sid})
	form := url.Values{"path": {"main/MEMORY.md"}, "version": {hidden(t, w.Body.String(), "version")},
		"token": {hidden(t, w.Body.String(), "token")}, "content": {"- two\n"}}
	w = e.page(pageReq{method: "POST", target: "/ns/alice/save", cookie: sid, form: form})
	wantStatus(t, w, http.StatusSeeOther)
	to := w.Header().Get("Location")
	if to != "/ns/alice/files/main/MEMORY.md" {
		t.Fatalf("a save redirects to %q, want the file page without a query", to)
	}
	// Another session sees no notice of this one's.
	other := e.signIn("alice-key")
	if b := e.page(pageReq{method: "GET", target: to, cookie: other}).Body.String(); strings.Contains(b, "Saved.") {
		t.Fatal("a notice showed in another session")
	}
	if b := e.page(pageReq{method: "GET", target: to, cookie: sid}).Body.String(); !strings.Contains(b, `<p class="flash" role="status">Saved.</p>`) {
		t.Fatalf("the file page after a save lacks the notice:\n%s", b)
	}
	if b := e.page(pageReq{method: "GET", target: to, cookie: sid}).Body.String(); strings.Contains(b, "Saved.") {
		t.Fatal("the notice showed twice")
	}
}

// Delete asks to confirm on a page of its own (no script needed); after
// the delete the notebook links to the version to restore when the store
// keeps history, and says plainly when it does not.
func TestPagesDeleteConfirmsAndOffersRestore(t *testing.T) {
	for _, history := range []bool{true, false} {
		var opts *store.Options
		if history {
			opts = &store.Options{History: &store.HistoryOptions{}}
		}
		s := store.New(newMemDriver(t), opts)
		t.Cleanup(func() { s.Close() })
		e := newEnvOn(t, s, nil)
		v := e.seed("alice/main/notes.md", "- keep me\n")
		sid := e.signIn("alice-key")

		// The file page's Delete is a link to the confirmation, no form
		// that deletes.
		b := e.page(pageReq{method: "GET", target: "/ns/alice/files/main/notes.md", cookie: sid}).Body.String()
		if strings.Contains(b, `action="/ns/alice/delete"`) || !strings.Contains(b, `href="/ns/alice/delete/main/notes.md"`) {
			t.Fatalf("the file page deletes in one click, or lacks the link to confirm:\n%s", b)
		}
		w := e.page(pageReq{method: "GET", target: "/ns/alice/delete/main/notes.md", cookie: sid})
		wantStatus(t, w, http.StatusOK)
		b = w.Body.String()
		if !strings.Contains(b, "- keep me") || hidden(t, b, "version") != v || hidden(t, b, "confirm") != "1" {
			t.Fatalf("the confirmation lacks the file, its version or the confirming form:\n%s", b)
		}
		if got := strings.Contains(b, "cannot be restored"); got == history {
			t.Fatalf("history %v: the confirmation says cannot be restored = %v:\n%s", history, got, b)
		}
		// A post without the confirmation (an old file page's form) only
		// asks.
		w = e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: sid,
			form: url.Values{"path": {"main/notes.md"}, "version": {v}, "token": {"old"}}})
		wantStatus(t, w, http.StatusOK)
		if e.content("alice/main/notes.md") != "- keep me\n" {
			t.Fatal("a delete without confirmation deleted")
		}
		form := url.Values{"path": {"main/notes.md"}, "version": {v}, "token": {hidden(t, b, "token")}, "confirm": {"1"}}
		w = e.page(pageReq{method: "POST", target: "/ns/alice/delete", cookie: sid, form: form})
		wantStatus(t, w, http.StatusSeeOther)
		if e.content("alice/main/notes.md") != "<not_found>" {
			t.Fatal("the confirmed delete did not delete")
		}
		b = e.page(pageReq{method: "GET", target: w.Header().Get("Location"), cookie: sid}).Body.String()
		notice := regexp.MustCompile(`<p class="flash" role="status">(.*?)</p>`).FindStringSubmatch(b)
		if notice == nil {
			t.Fatalf("history %v: no notice after the delete:\n%s", history, b)
		}
		restore := `<a href="/ns/alice/versions/main/notes.md?v=` + url.QueryEscape(v) + `">Restore it from its history</a>`
		if history && notice[1] != "Deleted main/notes.md. "+restore ||
			!history && notice[1] != "Deleted main/notes.md. This store keeps no history of it, so it cannot be restored." {
			t.Fatalf("history %v: notice %q", history, notice[1])
		}
		if history {
			w := e.page(pageReq{method: "GET", target: "/ns/alice/versions/main/notes.md?v=" + url.QueryEscape(v), cookie: sid})
			wantStatus(t, w, http.StatusOK)
			if !strings.Contains(w.Body.String(), "Restore this version") {
				t.Fatalf("the version the notice links to offers no restore:\n%s", w.Body)
			}
		}
	}
}

// The namespace's history page lists changes in the API's order (by path,
// newest first within a file), a page at a time behind the API's cursor.
func TestPagesHistoryInTheAPIsOrder(t *testing.T) {
	e := newEnv(t)
	write := func(p, content string) {
		f, err := e.s.Read(t.Context(), p, 1)
		exp := ""
		if err == nil {
			exp = f.Version
		}
		if _, err := e.s.Write(t.Context(), store.WriteRequest{Path: p, Content: content, Expected: exp}); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved in time: b, a, b, a.
	write("alice/main/b.md", "b1\n")
	write("alice/main/a.md", "a1\n")
	write("alice/main/b.md", "b2\n")
	write("alice/main/a.md", "a2\n")
	var api []string
	for _, en := range e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history", key: "alice-key"}).want(200, "").json()["entries"].([]any) {
		api = append(api, en.(map[string]any)["version"].(string))
	}
	sid := e.signIn("alice-key")
	b := e.page(pageReq{method: "GET", target: "/ns/alice/history/", cookie: sid}).Body.String()
	var page []string
	for _, m := range regexp.MustCompile(`<code class="ver" title="([^"]+)"`).FindAllStringSubmatch(b, -1) {
		page = append(page, m[1])
	}
	if strings.Join(page, " ") != strings.Join(api, " ") || len(api) != 4 {
		t.Fatalf("the history page lists %v, the API %v: want the same order", page, api)
	}
	if !strings.Contains(b, "By file, newest first within each file") {
		t.Fatal("the history page does not say its order")
	}
	// Past a page: a link to the next, which continues where it ended.
	for i := range pageHistory {
		write("alice/main/c.md", strings.Repeat("c", i+1))
	}
	b = e.page(pageReq{method: "GET", target: "/ns/alice/history/", cookie: sid}).Body.String()
	next := regexp.MustCompile(`<a class="button" href="(/ns/alice/history/\?cursor=[^"]+)">Next page`).FindStringSubmatch(b)
	if next == nil {
		t.Fatalf("no next page link past %d changes", pageHistory)
	}
	w := e.page(pageReq{method: "GET", target: strings.ReplaceAll(next[1], "&amp;", "&"), cookie: sid})
	wantStatus(t, w, http.StatusOK)
	if n, want := strings.Count(w.Body.String(), `<code class="ver"`), (len(api)+pageHistory)-pageHistory; n != want {
		t.Fatalf("the second page lists %d changes, want the %d past the first page", n, want)
	}
	// A cursor of another listing is refused.
	wantStatus(t, e.page(pageReq{method: "GET", target: "/ns/alice/history/main/a.md?" + strings.SplitN(next[1], "?", 2)[1], cookie: sid}), http.StatusBadRequest)
}

func TestPagesFavicon(t *testing.T) {
	e := newEnv(t)
	for _, target := range []string{"/favicon.ico", "/static/favicon.ico"} {
		w := e.page(pageReq{method: "GET", target: target})
		wantStatus(t, w, http.StatusOK)
		if b := w.Body.Bytes(); len(b) < 22 || string(b[:4]) != "\x00\x00\x01\x00" {
			t.Fatalf("GET %s is not an icon: %q", target, b)
		}
	}
	sid := e.signIn("alice-key")
	if b := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: sid}).Body.String(); !strings.Contains(b, `<link rel="icon" href="/static/favicon.ico">`) {
		t.Fatal("the pages do not link the icon")
	}
}
