package anthropic

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// hostilePaths generates n distinct paths that try to leave /memories:
// traversal in every spelling (plain, backslash, percent-encoded once and
// twice, overlong and full-width dots, Unicode slashes), absolute paths
// elsewhere, NUL, the store's own layout and the other user's name.
func hostilePaths(n int) []string {
	starts := []string{"/memories/", "/memories", "/", "", "memories/", "/memories/a/", "/memories//", `/memories\`, "/MEMORIES/", " /memories/"}
	steps := []string{"..", "../", `..\`, `..\\`, "%2e%2e", "%2e%2e%2f", "%2E%2E%2F", "%252e%252e%252f", "..%2f", "%2e%2e/",
		".%2e/", "%2e./", "..;/", "\x00", "..\x00/", "\u2025/", "\uff0e\uff0e/", "..\u2215", "..\uff0f", "\u2024\u2024/",
		"%c0%ae%c0%ae/", "./", ".../", "....//", "~/", "$HOME/", "%00", "a/../../", "..%5c", "%5c..%5c"}
	ends := []string{"bob/memories/secret.md", "bob", "secret.md", "..", "memories-journal", "", "bob/memories/",
		"etc/passwd", "bob%2fmemories%2fsecret.md", `bob\memories\secret.md`, "bob/memories-journal/x", "é/ü.md", "a b.md"}
	r := rand.New(rand.NewPCG(16, 2025))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		b.WriteString(starts[r.IntN(len(starts))])
		for range r.IntN(5) + 1 {
			b.WriteString(steps[r.IntN(len(steps))])
		}
		b.WriteString(ends[r.IntN(len(ends))])
		if p := b.String(); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// TestTenantIsolation runs every command on 2,000 hostile paths for alice:
// nothing of bob's is ever read (no result mentions his secret) or changed.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	tl := newTool(t, s)
	const secret = "BOB-SECRET-CONTENT"
	seedStore(t, tl, "bob", map[string]string{"/memories/secret.md": secret + "\n", "/memories/bob/memories/secret.md": secret + "\n"})
	seedStore(t, tl, "alice", map[string]string{"/memories/a.md": "alice\n"})
	bob := dump(files(t, s, "bob/"))
	paths := hostilePaths(2000)
	for i, p := range paths {
		for j, c := range []Command{
			{Command: "view", Path: p},
			{Command: "view", Path: p, ViewRange: []int64{1, -1}},
			{Command: "create", Path: p, FileText: "alice wrote"},
			{Command: "str_replace", Path: p, OldStr: "SECRET-CONTENT", NewStr: "stolen"},
			{Command: "insert", Path: p, InsertLine: 0, InsertText: "alice"},
			{Command: "delete", Path: p},
			{Command: "rename", OldPath: p, NewPath: "/memories/loot.md"},
			{Command: "rename", OldPath: "/memories/a.md", NewPath: p},
		} {
			r := exec(t, tl, "alice", fmt.Sprintf("t%d-%d", i, j), c)
			if strings.Contains(r.Text, secret) || strings.Contains(strings.ReplaceAll(r.Text, p, ""), "bob/") {
				t.Fatalf("%q: %+v leaked: %q", p, c, r.Text)
			}
		}
	}
	if got := dump(files(t, s, "bob/")); got != bob {
		t.Fatalf("bob's files changed:\n%s\nwas\n%s", got, bob)
	}
	all := files(t, s, "")
	for path := range all {
		if !strings.HasPrefix(path, "alice/memories/") && !strings.HasPrefix(path, "bob/memories/") {
			t.Fatalf("a file outside the users' memories: %s", path)
		}
	}
}
