package console

import (
	"archive/tar"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// exportOf is the export route's archive of ns, as key.
func (e *env) exportOf(ns, key string) string {
	e.t.Helper()
	return e.do(req{method: "GET", target: "/api/v1/namespaces/" + ns + "/export", key: key}).want(200, "").Body.String()
}

// importReq posts archive to ns's import route as key.
func importReq(ns, key, archive, query string, headers ...string) req {
	return req{method: "POST", target: "/api/v1/namespaces/" + ns + "/import" + query, key: key, body: archive,
		headers: append([]string{"Content-Type: application/x-tar"}, headers...)}
}

// retar rewrites an archive, changing entry name's content to content.
func retar(t *testing.T, archive, name, content string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tr := tar.NewReader(strings.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if h.Name == name {
			b = []byte(content)
		}
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: h.Name, Mode: 0o644, Size: int64(len(b))})
		tw.Write(b)
	}
	tw.Close()
	return buf.String()
}

func TestImport(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- one\n", Metadata: map[string]string{"updated_by": "agent", "source": "crm"}})
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/notes.md", Content: "two\n"})
	e.s.Write(ctx, store.WriteRequest{Path: "bob_40example.com/main/MEMORY.md", Content: "bob's\n"})
	tarball := e.exportOf("alice", "alice-key")
	e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice?confirm=alice", key: "admin-key"}).want(200, "")

	// Back into an empty namespace, stamped with who imported it; a rerun
	// writes nothing.
	out := e.do(importReq("alice", "alice-key", tarball, "")).want(200, "").json()
	if out["created"] != float64(2) || out["unchanged"] != float64(0) || out["namespace"] != "alice" {
		t.Fatalf("import %v", out)
	}
	f, _ := e.s.Read(ctx, "alice/main/MEMORY.md", wholeFile)
	if f.Content != "- one\n" || f.Metadata["source"] != "crm" || f.Metadata[UpdatedByKey] != "alice" || f.Metadata[ClientKey] != "test" {
		t.Fatalf("imported %+v", f)
	}
	out = e.do(importReq("alice", "admin-key", tarball, "")).want(200, "").json()
	if out["unchanged"] != float64(2) || out["created"] != float64(0) {
		t.Fatalf("rerun by an admin %v", out)
	}

	// A file that changed is kept (409, listed) unless ?force=1.
	e.s.Write(ctx, store.WriteRequest{Path: "alice/main/notes.md", Content: "mine\n", Expected: e.version("alice/main/notes.md")})
	p := e.do(importReq("alice", "alice-key", tarball, "")).want(409, "import-incomplete").json()
	if d, _ := p["differ"].([]any); len(d) != 1 || d[0] != "main/notes.md" || p["unchanged"] != float64(1) {
		t.Fatalf("409 problem %v", p)
	}
	if e.content("alice/main/notes.md") != "mine\n" {
		t.Fatal("a differing file was overwritten")
	}
	e.do(importReq("alice", "alice-key", tarball, "?force=x")).want(400, "invalid-parameter")
	out = e.do(importReq("alice", "alice-key", tarball, "?force=1")).want(200, "").json()
	if out["replaced"] != float64(1) || e.content("alice/main/notes.md") != "two\n" {
		t.Fatalf("forced import %v", out)
	}

	// Refused archives write nothing: damaged, another namespace's, not
	// a tar, too large; the wrong media type; another user's namespace.
	before := snapshotStore(t, e.s)
	e.do(importReq("alice", "alice-key", retar(t, tarball, "alice/main/notes.md", "evil\n"), "?force=1")).want(422, "archive-refused")
	e.do(importReq("alice", "alice-key", retar(t, tarball, "x", ""), "?force=1")).want(200, "") // rewritten whole: still valid
	bobs := e.exportOf("bob_40example.com", "admin-key")
	if r := e.do(importReq("alice", "alice-key", bobs, "?force=1")).want(422, "archive-refused"); !strings.Contains(r.Body.String(), "not under") {
		t.Fatalf("another namespace's archive: %s", r.Body)
	}
	e.do(importReq("alice", "alice-key", "not a tar", "")).want(422, "archive-refused")
	e.do(importReq("alice", "alice-key", tarball[:1024], "?force=1")).want(422, "archive-refused")
	e.do(req{method: "POST", target: "/api/v1/namespaces/alice/import", key: "alice-key", body: tarball}).want(415, "unsupported-media-type")
	e.do(importReq("bob_40example.com", "alice-key", bobs, "?force=1")).want(404, "namespace-not-found")
	e.do(importReq("alice", "", tarball, "")).want(401, "unauthenticated")
	small := newEnvOn(t, e.s, &Options{MaxImportBytes: 2048})
	small.do(importReq("alice", "alice-key", tarball, "?force=1")).want(413, "too-large")
	if after := snapshotStore(t, e.s); after != before {
		t.Fatalf("a refused import wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// A retried import with the same Idempotency-Key applies each file once;
// the same key with another archive is refused.
func TestImportIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	e.s.Write(t.Context(), store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- one\n"})
	tarball := e.exportOf("alice", "alice-key")
	e.do(req{method: "DELETE", target: "/api/v1/namespaces/alice?confirm=alice", key: "admin-key"}).want(200, "")
	e.do(importReq("alice", "alice-key", tarball, "", "Idempotency-Key: imp-1")).want(200, "")
	e.s.Write(t.Context(), store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "later\n", Expected: e.version("alice/main/MEMORY.md")})
	out := e.do(importReq("alice", "alice-key", tarball, "", "Idempotency-Key: imp-1")).want(200, "").json()
	if out["replayed"] != float64(1) || out["created"] != float64(1) || e.content("alice/main/MEMORY.md") != "later\n" {
		t.Fatalf("retry %v, content %q", out, e.content("alice/main/MEMORY.md"))
	}
	second := e.exportOf("alice", "alice-key") // "later": another archive
	e.do(importReq("alice", "alice-key", second, "", "Idempotency-Key: imp-1")).want(422, "idempotency-key-reused")
	if e.content("alice/main/MEMORY.md") != "later\n" {
		t.Fatal("a reused key wrote")
	}
}

func (e *env) version(p string) string {
	e.t.Helper()
	f, err := e.s.Read(e.t.Context(), p, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	return f.Version
}

// The notebook page's import form uploads an archive once per render and
// shows the counts; a user cannot import into another namespace.
func TestPagesImport(t *testing.T) {
	e := newEnv(t)
	e.seed("alice/main/MEMORY.md", "- one\n")
	tarball := e.exportOf("alice", "alice-key")
	sid := e.signIn("alice-key")
	w := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: sid})
	wantStatus(t, w, http.StatusOK)
	token := hidden(t, w.Body.String(), "token")
	upload := func(ns, token, force, archive string) *httptest.ResponseRecorder {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("token", token)
		if force != "" {
			mw.WriteField("force", force)
		}
		fw, _ := mw.CreateFormFile("archive", "alice.tar")
		io.WriteString(fw, archive)
		mw.Close()
		hr := httptest.NewRequestWithContext(t.Context(), "POST", "/ns/"+ns+"/import", &buf)
		hr.Header.Set("Content-Type", mw.FormDataContentType())
		hr.AddCookie(&http.Cookie{Name: sessionCookie, Value: sid})
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, hr)
		return rec
	}
	e.s.Write(t.Context(), store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "mine\n", Expected: e.version("alice/main/MEMORY.md")})
	w = upload("alice", token, "", tarball)
	wantStatus(t, w, http.StatusConflict)
	if !strings.Contains(w.Body.String(), "main/MEMORY.md") || e.content("alice/main/MEMORY.md") != "mine\n" {
		t.Fatalf("differing file: %s", w.Body)
	}
	// Said once, in the page's terms (the API's ?force=1 is not a page's).
	if b := w.Body.String(); strings.Count(b, "from the archive") != 1 || strings.Contains(b, "force=1") {
		t.Fatalf("the differing file is told %d times, or in the API's words:\n%s", strings.Count(b, "from the archive"), b)
	}
	w = upload("alice", token+"2", "1", tarball)
	wantStatus(t, w, http.StatusOK)
	if !strings.Contains(w.Body.String(), "1 replaced") || e.content("alice/main/MEMORY.md") != "- one\n" {
		t.Fatalf("forced import page: %s", w.Body)
	}
	// A double submit of the same form applies once.
	e.s.Write(t.Context(), store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "after\n", Expected: e.version("alice/main/MEMORY.md")})
	wantStatus(t, upload("alice", token+"2", "1", tarball), http.StatusOK)
	if e.content("alice/main/MEMORY.md") != "after\n" {
		t.Fatal("a double submit imported twice")
	}
	wantStatus(t, upload("alice", token+"3", "1", tarball[:1024]), http.StatusUnprocessableEntity)
	wantStatus(t, upload("alice", "", "1", tarball), http.StatusBadRequest)
	wantStatus(t, upload("bob_example.com", token+"4", "1", tarball), http.StatusNotFound)
	if e.content("alice/main/MEMORY.md") != "after\n" {
		t.Fatal("a refused upload wrote")
	}
}
