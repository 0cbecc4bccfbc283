package search

import (
	"math"
	"testing"
)

// TestVectorWeightFollowsCoverage: the vector ranking's weight in a
// hybrid fusion is the share of the query's own words (by IDF) that
// BM25's best file lacks: 0 when it has them all, 1 when nothing matched,
// and in between otherwise; related words never count as the query's.
func TestVectorWeightFollowsCoverage(t *testing.T) {
	cands := []candidate{
		{path: "u/a.md", content: "- The red sofa stands in the hall.\n"},
		{path: "u/b.md", content: "- A red door and a green gate.\n"},
		{path: "u/c.md", content: "- Gym three evenings a week.\n"},
	}
	weight := func(query string) float64 {
		t.Helper()
		lex := bm25(nil, "u/", query, cands)
		sortHits(lex)
		return vectorWeight(lex)
	}
	if w := weight("red sofa"); w != 0 {
		t.Errorf("every word in the best file: weight %v, want 0", w)
	}
	if w := weight("qzxv"); w != 1 {
		t.Errorf("no match: weight %v, want 1", w)
	}
	if w := vectorWeight(nil); w != 1 {
		t.Errorf("no BM25 ranking: weight %v, want 1", w)
	}
	// "red" is in two files, "piano" in none: the best file has the
	// commoner word only, so most of the query's IDF is missing.
	w := weight("red piano")
	if w <= 0.5 || w >= 1 {
		t.Errorf("red piano: weight %v, want between 0.5 and 1", w)
	}
	// "workout" matches c.md only through a related word (gym): that
	// file lacks the query's word, so vectors weigh in full.
	lex := bm25(nil, "u/", "workout", cands)
	if len(lex) != 1 || lex[0].rel != "c.md" {
		t.Fatalf("workout: BM25 %v, want c.md through a related word", lex)
	}
	if w := vectorWeight(lex); math.Abs(w-1) > 1e-9 {
		t.Errorf("a related word's match: weight %v, want 1", w)
	}
}
