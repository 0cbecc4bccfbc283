package anthropic

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/store"
)

// TestNamesOutsideStoreAlphabet: names a file system takes (spaces,
// letters outside ASCII, punctuation) work in every command and are
// listed back as written; traversal stays refused.
func TestNamesOutsideStoreAlphabet(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := store.New(b.open(t), nil)
			defer s.Close()
			tl := newTool(t, s)
			seedStore(t, tl, "u", map[string]string{
				"/memories/café notes.md":          "crème\n",
				"/memories/日本 語/メモ (1).md":         "x",
				"/memories/a..b":                   "dots",
				"/memories/--caf-e9-20notes.md":    "the stored spelling, as a name",
				"/memories/.agentmem-like":         "hidden, reserved in the store",
				"/memories/what? <why> & 100%.txt": "punctuation",
			})
			got := exec(t, tl, "u", "", Command{Command: "view", Path: Root})
			want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
				"4.0K\t/memories\n" +
				"30B\t/memories/--caf-e9-20notes.md\n" +
				"4B\t/memories/a..b\n" +
				"7B\t/memories/café notes.md\n" +
				"11B\t/memories/what? <why> & 100%.txt\n" +
				"4.0K\t/memories/日本 語/\n" +
				"1B\t/memories/日本 語/メモ (1).md"
			if got.IsError || got.Text != want {
				t.Fatalf("view:\n%s\nwant\n%s", got.Text, want)
			}
			exec(t, tl, "u", "t1", Command{Command: "str_replace", Path: "/memories/café notes.md", OldStr: "crème", NewStr: "lait"})
			exec(t, tl, "u", "t2", Command{Command: "rename", OldPath: "/memories/日本 語", NewPath: "/memories/ñ"})
			if r := exec(t, tl, "u", "", Command{Command: "view", Path: "/memories/ñ/メモ (1).md"}); r.IsError {
				t.Fatalf("renamed file: %s", r.Text)
			}
			if r := exec(t, tl, "u", "", Command{Command: "view", Path: "/memories/café notes.md"}); !strings.Contains(r.Text, "\tlait") {
				t.Fatalf("edited file: %s", r.Text)
			}
			for _, p := range []string{"/memories/../x", "/memories/é/../../x", "/memories/%2e%2e/x", `/memories/..\x`} {
				if r := exec(t, tl, "u", "", Command{Command: "view", Path: p}); !strings.HasSuffix(r.Text, "would escape /memories directory") {
					t.Errorf("%s: %s", p, r.Text)
				}
			}
			// Every store file is below the user's memories folder.
			for p := range files(t, s, "") {
				if !strings.HasPrefix(p, "u/memories/") {
					t.Fatalf("stored outside: %s", p)
				}
			}
		})
	}
}

// TestStoreNameMapping checks the name mapping's promises on many names:
// a valid store segment (not an encoding) is its own name; every stored
// name is a valid segment; memoryName inverts storeName; no two names
// share a stored name; and every valid store segment is the stored name of
// exactly the name it lists as (so no stored file is unreachable).
func TestStoreNameMapping(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 13))
	alphabet := []rune("aZ9_.-- é☕日\U0001F600\x01/%\\~<")
	name := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	seen := map[string]string{}
	fixed := []string{"notes.md", "--notes", "--caf-e9", "--caf-e9-20notes.md", "---2d", "a..b", ".hidden", ".agentmem",
		"-", "--", "---", "--.", "--..", "--u", "--u4e2d", "--U01f600", "--uXXXX", "--2D", "x-y", "...", "é", "日本語"}
	for i := range 20000 {
		n := name(r.IntN(12) + 1)
		if i < len(fixed) {
			n = fixed[i]
		}
		if n == "." || n == ".." || strings.Contains(n, "/") {
			continue
		}
		s := storeName(n)
		if utf8.RuneCountInString(s) <= store.MaxSegmentChars {
			if err := store.ValidatePath(s); err != nil {
				t.Fatalf("storeName(%q) = %q: %v", n, s, err)
			}
		}
		if back := memoryName(s); back != n {
			t.Fatalf("memoryName(storeName(%q) = %q) = %q", n, s, back)
		}
		if prev, dup := seen[s]; dup && prev != n {
			t.Fatalf("%q and %q are both stored as %q", prev, n, s)
		}
		seen[s] = n
		if store.ValidatePath(n) == nil && !strings.HasPrefix(n, escapeMark) && s != n {
			t.Fatalf("valid name %q stored as %q", n, s)
		}
		// Store segments: each lists as a name that maps back to it.
		if seg := strings.NewReplacer("/", "", " ", "", "é", "", "☕", "", "日", "", "\U0001F600", "", "\x01", "",
			"%", "", "\\", "", "~", "", "<", "").Replace(n); store.ValidatePath(seg) == nil {
			if got := storeName(memoryName(seg)); got != seg {
				t.Fatalf("segment %q lists as %q, stored as %q", seg, memoryName(seg), got)
			}
		}
	}
	for n, want := range map[string]string{"café notes.md": "--caf-e9-20notes.md", "日本": "---u65e5-u672c", "a..b": "--a.-2eb",
		"😀": "---U01f600", "--caf-e9-20notes.md": "---2d-2dcaf-2de9-2d20notes.md", "--notes": "--notes", "notes.md": "notes.md"} {
		if got := storeName(n); got != want {
			t.Errorf("storeName(%q) = %q, want %q", n, got, want)
		}
	}
}

// FuzzStoreName: for any name, the stored name decodes back and is a
// valid store segment when it fits.
func FuzzStoreName(f *testing.F) {
	for _, s := range []string{"café notes.md", "--caf-e9", "a..b", "x", "--", "-u0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if !utf8.ValidString(n) || n == "" || n == "." || n == ".." || strings.Contains(n, "/") {
			return
		}
		s := storeName(n)
		if memoryName(s) != n {
			t.Fatalf("memoryName(storeName(%q) = %q) = %q", n, s, memoryName(s))
		}
		if utf8.RuneCountInString(s) <= store.MaxSegmentChars && store.ValidatePath(s) != nil {
			t.Fatalf("storeName(%q) = %q is not a valid segment", n, s)
		}
	})
}
