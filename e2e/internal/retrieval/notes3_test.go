package retrieval

import (
	"maps"
	"testing"
)

// TestNotes3Set checks the third notes set's shape: one user, 25 notes,
// 40 queries in dev.json's mix of kinds, each wanting one of the notes.
func TestNotes3Set(t *testing.T) {
	set := Notes3()
	if set.Name != "notes3" {
		t.Fatalf("name %q", set.Name)
	}
	if len(set.Users) != 1 || len(set.Queries) != 1 {
		t.Fatalf("%d users, %d query namespaces, want 1 and 1", len(set.Users), len(set.Queries))
	}
	files := set.Users["graham"]
	if len(files) != 25 {
		t.Fatalf("%d notes, want 25", len(files))
	}
	qs := set.Queries["graham"]
	if len(qs) != 40 {
		t.Fatalf("%d queries, want 40", len(qs))
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if len(q.Want) != 1 || files[q.Want[0]] == "" {
			t.Errorf("query %q wants %v, want one of the set's notes", q.Q, q.Want)
		}
	}
	want := map[string]int{"exact": 5, "morphology": 6, "question": 9, "paraphrase": 20}
	if !maps.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
}
