package lexis

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestRelatedWords(t *testing.T) {
	if got := RelatedWords("workout"); !slices.Contains(got, "gym") || !slices.Contains(got, "fitness") {
		t.Errorf("RelatedWords(workout) = %q, want gym and fitness among them", got)
	}
	for _, w := range []string{"", "qzxv", "the", "Workout", "workou", "workouts\t"} {
		if got := RelatedWords(w); got != nil {
			t.Errorf("RelatedWords(%q) = %q, want nil", w, got)
		}
	}
	// The first and the last line of the table are found.
	tb := loadRelated()
	for _, k := range []int{0, len(tb.lines) - 1} {
		w, _, _ := strings.Cut(tb.line(k), "\t")
		if len(RelatedWords(w)) == 0 {
			t.Errorf("RelatedWords(%q) (line %d) = nil", w, k)
		}
	}
	if len(tb.lines) < 10000 {
		t.Errorf("the table has %d words, want more than 10,000", len(tb.lines))
	}
}

func TestScannerRelated(t *testing.T) {
	sc := NewScanner()
	related := func(s string, perWord int) []RelatedGroup { return sc.Related(s, sc.QueryTerms(s), perWord) }
	got := related("What are her workout habits?", 4)
	if len(got) != 2 {
		t.Fatalf("Related = %v, want a group for workout and one for habits", got)
	}
	for i, g := range got {
		if len(g.Terms) == 0 || len(g.Terms) > 4 {
			t.Errorf("group %q: want 1 to 4 terms", g.Terms)
		}
		if g.Of != i { // workout is query term 0, habits 1
			t.Errorf("group %d: Of = %d, want %d", i, g.Of, i)
		}
	}
	if !slices.Contains(got[0].Terms, "gym") {
		t.Errorf("workout's group %q lacks gym", got[0].Terms)
	}
	seen := map[string]bool{"workout": true, "habit": true}
	for _, g := range got {
		for _, term := range g.Terms {
			if seen[term] {
				t.Errorf("term %q is a query term or given twice (%v)", term, got)
			}
			seen[term] = true
			if IsStop(term) {
				t.Errorf("stop word %q among %v", term, got)
			}
		}
	}
	if g := related("the of and", 4); g != nil {
		t.Errorf("stop words: Related = %v, want nil", g)
	}
	if g := related("workout", 1); len(g) != 1 || len(g[0].Terms) != 1 {
		t.Errorf("perWord 1: Related = %v, want one term", g)
	}
	for _, n := range []int{0, -1} {
		if g := related("workout", n); g != nil {
			t.Errorf("perWord %d: Related = %v, want nil", n, g)
		}
	}
	if g := related("", 4); g != nil {
		t.Errorf("empty query: Related = %v, want nil", g)
	}
}

func TestWords(t *testing.T) {
	words, terms := NewScanner().Words("Joana's café, don't RUNNING 東京")
	if want := []string{"joana", "cafe", "dont", "running", "東", "京"}; !slices.Equal(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	if want := []string{"joana", "cafe", "dont", "run", "東", "京"}; !slices.Equal(terms, want) {
		t.Errorf("terms = %q, want %q", terms, want)
	}
}

// relatedReference is Related as first written, without the Scanner's
// cache: each related word looked up in the table and stemmed on every
// call.
func relatedReference(sc *Scanner, s string, perWord int) []RelatedGroup {
	q := sc.QueryTerms(s)
	taken := map[string]bool{}
	of := map[string]int{}
	for i, g := range q {
		of[g[0]] = i
		for _, t := range g {
			taken[t] = true
		}
	}
	var out []RelatedGroup
	seen := map[string]bool{}
	words, terms := sc.Words(s)
	for i, word := range words {
		src, ok := of[terms[i]]
		if !ok || stopTerms[terms[i]] || seen[word] {
			continue
		}
		seen[word] = true
		g := RelatedGroup{Of: src}
		for _, r := range RelatedWords(word) {
			if len(g.Terms) >= perWord {
				break
			}
			sc.Each(r, func(t string, _, _ int) {
				if !taken[t] && !stopTerms[t] {
					taken[t] = true
					g.Terms = append(g.Terms, t)
				}
			})
		}
		if len(g.Terms) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// TestRelatedMatchesReference: Related, with its per-Scanner cache cold,
// warm and started over, gives what looking every word up again gives,
// for queries of words the table has next to each other (whose related
// words overlap), with repeats, stop words, possessives and other
// scripts.
func TestRelatedMatchesReference(t *testing.T) {
	tb := loadRelated()
	var queries []string
	for k := 0; k+3 < len(tb.lines); k += 97 {
		var ws []string
		for j := range 4 {
			w, _, _ := strings.Cut(tb.line(k+j), "\t")
			ws = append(ws, w)
		}
		queries = append(queries, strings.Join(ws, " "))
	}
	queries = append(queries,
		"What are her workout habits?", "workout workouts gym fitness", "Joana's doctorate, PhD and degree",
		"the of and", "", "  ... ", "running runner runs", "東京 ramen Москва", "CAR car Car's cars automobile",
		strings.Repeat("vehicle ", 40), strings.Repeat("x", 5000), "don't buy purchase bought",
	)
	sc, ref := NewScanner(), NewScanner()
	for pass := range 3 { // cold, warm, then a cache filled past its bound
		if pass == 2 {
			for k := range maxRelated {
				w, _, _ := strings.Cut(tb.line(k%len(tb.lines)), "\t")
				sc.relatedTerms(w + strings.Repeat("z", k/len(tb.lines)))
			}
		}
		for _, q := range queries {
			for _, perWord := range []int{1, 4, 8} {
				got, want := sc.Related(q, sc.QueryTerms(q), perWord), relatedReference(ref, q, perWord)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("pass %d, Related(%q, %d) = %v, want %v", pass, q, perWord, got, want)
				}
			}
		}
	}
	if len(sc.related) > maxRelated {
		t.Errorf("the cache holds %d words, want at most %d", len(sc.related), maxRelated)
	}
}

// TestRelatedTableSorted: the lookup's binary search compares a line's
// word with the query word, so the lines must be sorted by word, each
// word once; the words and their related words are letters a–z (so that
// sorting whole lines, as the generator does, sorts them by word), and
// only the first line is a header.
func TestRelatedTableSorted(t *testing.T) {
	tb := loadRelated()
	if !strings.HasPrefix(tb.text, "# related words:") {
		t.Errorf("the table starts %.40q, want its header", tb.text)
	}
	isWord := func(w string) bool {
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return false
			}
		}
		return len(w) >= 2
	}
	prev := ""
	for k := range tb.lines {
		line := tb.line(k)
		w, rest, ok := strings.Cut(line, "\t")
		if !ok || !isWord(w) || w <= prev {
			t.Fatalf("line %d %q after word %q: want a word of letters a–z, a tab, sorted after the previous word", k, line, prev)
		}
		prev = w
		rs := strings.Split(rest, " ")
		if len(rs) < 1 || len(rs) > 8 {
			t.Fatalf("line %d %q: want 1 to 8 related words", k, line)
		}
		for _, r := range rs {
			if !isWord(r) || r == w {
				t.Fatalf("line %d %q: related word %q is not another word of letters a–z", k, line, r)
			}
		}
	}
	if n := strings.Count(tb.text, "\n"); n != len(tb.lines)+1 || !strings.HasSuffix(tb.text, "\n") {
		t.Errorf("the table has %d lines and %d words: want one header line, then one line per word", n, len(tb.lines))
	}
}

// TestRelatedWordsConcurrent: the table is read once, and lookups from
// many goroutines at once (each search has its own Scanner) are safe; run
// under -race.
func TestRelatedWordsConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			sc := NewScanner()
			for range 50 {
				q := "workout habits doctorate"
				if g := sc.Related(q, sc.QueryTerms(q), 4); len(g) != 3 {
					t.Errorf("goroutine %d: Related = %v, want 3 groups", i, g)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWordsApostrophes: Words keeps Each's word boundaries (a curly
// apostrophe inside a word, none after an ideograph or at a word's start)
// and cleans each word the way its term was cleaned.
func TestWordsApostrophes(t *testing.T) {
	words, terms := NewScanner().Words("O’Neill's x's 's it's ΑΘΗΝΑ's 日本's 10:30")
	if want := []string{"oneill", "x", "s", "it", "αθηνα", "日", "本", "s", "10", "30"}; !slices.Equal(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	if want := []string{"oneil", "x", "s", "it", "αθηνα", "日", "本", "s", "10", "30"}; !slices.Equal(terms, want) {
		t.Errorf("terms = %q, want %q", terms, want)
	}
}
