package retrieval

import "testing"

// TestNotes2Set checks the shape of the third notes set: one user's 25
// notes and 40 queries in dev.json's mix of kinds, each wanting one of the
// notes.
func TestNotes2Set(t *testing.T) {
	set := Notes2()
	if len(set.Users) != 1 || len(set.Queries) != 1 {
		t.Fatalf("%d users, %d query namespaces; want 1 each", len(set.Users), len(set.Queries))
	}
	files := set.Users["daniel"]
	if len(files) != 25 {
		t.Fatalf("%d notes, want 25", len(files))
	}
	qs := set.Queries["daniel"]
	if len(qs) != 40 {
		t.Fatalf("%d queries, want 40", len(qs))
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if len(q.Want) != 1 || files[q.Want[0]] == "" {
			t.Errorf("query %q wants %v, not one of the notes", q.Q, q.Want)
		}
	}
	want := map[string]int{"exact": 5, "morphology": 6, "question": 9, "paraphrase": 20}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s queries, want %d", kinds[k], k, n)
		}
	}
	if len(kinds) != len(want) {
		t.Errorf("kinds %v, want only %v", kinds, want)
	}
}
