package retrieval

import (
	"testing"
	"unicode/utf8"
)

// TestChatsSet checks the hand-written conversations' shape: two
// namespaces of 16 sessions of 2,000 to 4,500 characters, 30 questions
// each of the four kinds, every wanted session one of the files.
func TestChatsSet(t *testing.T) {
	set := Chats()
	if len(set.Users) != 2 {
		t.Fatalf("%d conversations, want 2", len(set.Users))
	}
	for ns, files := range set.Users {
		if len(files) != 16 {
			t.Errorf("%s: %d sessions, want 16", ns, len(files))
		}
		for name, c := range files {
			if n := utf8.RuneCountInString(c); n < 1800 || n > 5000 {
				t.Errorf("%s/%s: %d characters, want about 2,000 to 4,500", ns, name, n)
			}
		}
		kinds := map[string]int{}
		for _, q := range set.Queries[ns] {
			kinds[q.Kind]++
			for _, w := range q.Want {
				if files[w] == "" {
					t.Errorf("%s: %q wants %s, not a session", ns, q.Q, w)
				}
			}
		}
		if len(set.Queries[ns]) != 30 || len(kinds) != 4 || kinds["single"] == 0 || kinds["multi"] == 0 || kinds["temporal"] == 0 || kinds["inference"] == 0 {
			t.Errorf("%s: %d questions of kinds %v, want 30 of single, multi, temporal and inference", ns, len(set.Queries[ns]), kinds)
		}
	}
	if _, _, _, err := parseSet("x.json", []byte(`{"namespace":"n","files":{"a.md":"x"},"queries":[{"q":"q","want":["b.md"]}]}`)); err == nil {
		t.Error("a query wanting a missing file parsed")
	}
}
