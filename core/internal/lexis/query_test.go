package lexis

import (
	"reflect"
	"slices"
	"testing"
)

func TestQueryTermsDropStopWords(t *testing.T) {
	sc := NewScanner()
	got := sc.QueryTerms("What is the name of my dentist?")
	var heads []string
	for _, g := range got {
		heads = append(heads, g[0])
	}
	if want := []string{"name", "dentist"}; !reflect.DeepEqual(heads, want) {
		t.Fatalf("QueryTerms = %q, want groups headed %q", got, want)
	}
	if got := sc.QueryTerms("what is it"); len(got) != 3 {
		t.Fatalf("a query of stop words only keeps them: %q", got)
	}
}

func TestVariantsJoinWhatTheStemmerLeavesApart(t *testing.T) {
	sc := NewScanner()
	term := func(w string) string { return sc.Terms(w)[0] }
	for _, pair := range [][2]string{{"runner", "runs"}, {"climber", "climbing"}, {"baker", "bake"}, {"grinder", "grind"},
		{"injury", "injured"}, {"runs", "runner"}, {"injured", "injury"}} {
		q, d := term(pair[0]), term(pair[1])
		if q == d {
			t.Fatalf("%s and %s already share a term", pair[0], pair[1])
		}
		if !slices.Contains(Variants(q), d) {
			t.Errorf("Variants(%q) = %q, want %q (%s)", q, Variants(q), d, pair[1])
		}
	}
	for _, v := range Variants(term("butter")) {
		if IsStop(v) {
			t.Errorf("Variants(butter) has the stop word %q", v)
		}
	}
	if v := Variants("x1"); v != nil {
		t.Errorf("Variants(x1) = %q", v)
	}
}
