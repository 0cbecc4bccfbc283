package console

import (
	"testing"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

// The console's diffs are textdiff's (core/textdiff tests the algorithm).
func TestUnifiedDiff(t *testing.T) {
	if got := unifiedDiff("x", "y", "one\ntwo", "one\nthree"); got != "--- x\n+++ y\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+three\n\\ No newline at end of file\n" {
		t.Fatalf("unified diff %q", got)
	}
	if got := unifiedDiff("x", "y", "same\n", "same\n"); got != "" {
		t.Fatalf("diff of equal texts %q", got)
	}
}

// TestOnFilestore runs create, update and a stale update on the file
// backend.
func TestOnFilestore(t *testing.T) {
	d, err := filestore.New(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, nil)
	u := aliceFile("main/MEMORY.md")
	v1 := e.do(req{method: "PUT", target: u, key: "alice-key", body: body("one\n"), headers: []string{"Idempotency-Key: f-1"}}).want(201, "").Header().Get("ETag")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("one\n"), headers: []string{"Idempotency-Key: f-1"}}).want(201, "")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("two\n"), headers: []string{"If-Match: " + v1}}).want(200, "")
	e.do(req{method: "PUT", target: u, key: "alice-key", body: body("lost\n"), headers: []string{"If-Match: " + v1}}).want(412, "precondition-failed")
	if got := e.content("alice/main/MEMORY.md"); got != "two\n" {
		t.Fatalf("content %q", got)
	}
	h := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/history/main/MEMORY.md", key: "alice-key"}).want(200, "").json()
	if n := len(h["entries"].([]any)); n != 2 {
		t.Fatalf("%d history entries, want 2", n)
	}
}
