package console

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

// TestDiffOpsRebuildBothSides checks, on random line sets, that the kept
// and removed lines give a, the kept and added lines give b, and that the
// script is shortest while it is under maxDiffEdits.
func TestDiffOpsRebuildBothSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a'+rng.IntN(4))) + "\n"
		}
		return out
	}
	for i := range 300 {
		a, b := gen(rng.IntN(30)), gen(rng.IntN(30))
		ops := diffOps(a, b)
		var ra, rb []string
		edits := 0
		for _, o := range ops {
			if o.op != '+' {
				ra = append(ra, o.line)
			}
			if o.op != '-' {
				rb = append(rb, o.line)
			}
			if o.op != ' ' {
				edits++
			}
		}
		if strings.Join(ra, "") != strings.Join(a, "") || strings.Join(rb, "") != strings.Join(b, "") {
			t.Fatalf("case %d: script does not rebuild a and b", i)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("case %d: %d edits, shortest is %d", i, edits, want)
		}
	}
	// Past the bound the middle is replaced whole, still a correct diff.
	var a, b []string
	for i := range maxDiffEdits + 10 {
		a, b = append(a, "a"+strings.Repeat("x", i)+"\n"), append(b, "b"+strings.Repeat("x", i)+"\n")
	}
	if ops := diffOps(a, b); len(ops) != len(a)+len(b) {
		t.Fatalf("%d ops past the bound, want %d", len(ops), len(a)+len(b))
	}
	if got := unifiedDiff("x", "y", "one\ntwo", "one\nthree"); got != "--- x\n+++ y\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+three\n\\ No newline at end of file\n" {
		t.Fatalf("unified diff %q", got)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestOnFilestore runs create, update and a stale update on the file
// backend.
func TestOnFilestore(t *testing.T) {
	s, err := filestore.Open(t.Context(), t.TempDir(), &store.Options{History: &store.HistoryOptions{}})
	if err != nil {
		t.Fatal(err)
	}
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
