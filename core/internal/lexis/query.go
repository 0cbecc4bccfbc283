package lexis

// Query terms: a query is matched by its content words. Function words
// ("what", "did", "my", "the") carry no topic; in a collection of short
// notes they occur in some notes and not others, so BM25 gives them a real
// weight and they rank notes that merely share them. A query keeps them
// only when it has nothing else.
//
// Each content term comes with its variants: the forms of the same word
// that the Porter stemmer leaves apart, an agent noun and its verb
// ("runner" and "runs", "climber" and "climbs", "baker" and "bake") and a
// final -y/-i ("injury" → "injuri", "injured" → "injur"). BM25 counts
// them with the term, at a lower weight.

// stopWords are English function words: articles, pronouns and
// possessives, auxiliaries, prepositions, conjunctions and question words.
var stopWords = []string{
	"a", "an", "the", "and", "or", "but", "nor", "so", "if", "then", "than", "as",
	"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours",
	"he", "him", "his", "she", "her", "hers", "it", "its", "they", "them", "their", "theirs",
	"this", "that", "these", "those", "there", "here",
	"am", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "doing", "done",
	"have", "has", "had", "having", "will", "would", "shall", "should", "can", "could", "may", "might", "must",
	"what", "which", "who", "whom", "whose", "when", "where", "why", "how",
	"of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "about", "over", "under",
	"up", "down", "out", "off", "again", "very", "too", "just", "also", "any", "some", "all", "each",
	"not", "no", "yes", "ever", "there's", "what's", "i'm", "i've", "i'd", "don't", "didn't",
}

// stopTerms are the stop words as terms (normalised and stemmed).
var stopTerms = func() map[string]bool {
	sc := NewScanner()
	m := map[string]bool{}
	for _, w := range stopWords {
		sc.Each(w, func(t string, _, _ int) { m[t] = true })
	}
	return m
}()

// IsStop reports whether term (as Each returns it) is a function word.
func IsStop(term string) bool { return stopTerms[term] }

// QueryTerms returns the distinct content terms of query s in first-seen
// order, each as its term followed by its variants, none of which is
// another group's term. A query of stop words only keeps them.
func (sc *Scanner) QueryTerms(s string) [][]string {
	all := sc.Terms(s)
	terms := make([]string, 0, len(all))
	for _, t := range all {
		if !stopTerms[t] {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		terms = all
	}
	taken := make(map[string]bool, len(terms))
	for _, t := range terms {
		taken[t] = true
	}
	out := make([][]string, len(terms))
	for i, t := range terms {
		g := []string{t}
		for _, v := range Variants(t) {
			if !taken[v] {
				taken[v] = true
				g = append(g, v)
			}
		}
		out[i] = g
	}
	return out
}

// Variants returns the other terms of the word whose term is t, beyond what
// the stemmer conflates: with and without an agent suffix -er ("runner" ↔
// "run", "baker" ↔ "bake", "climber" ↔ "climb") and a final "i" ("injuri" ↔
// "injur"). Terms of fewer than three letters or with a byte outside a–z
// have none, and no variant is a stop word's term. A variant may be
// another word ("summer" ↔ "sum"): callers weigh variants below the term.
func Variants(t string) []string {
	if len(t) < 3 {
		return nil
	}
	for i := 0; i < len(t); i++ {
		if t[i] < 'a' || t[i] > 'z' {
			return nil
		}
	}
	var out []string
	add := func(v string) {
		if len(v) >= 3 && v != t && !stopTerms[v] {
			for _, o := range out {
				if o == v {
					return
				}
			}
			out = append(out, v)
		}
	}
	n := len(t)
	if n >= 5 && t[n-2:] == "er" {
		base := t[:n-2]
		add(base)       // climber → climb
		add(base + "e") // baker → bake
		if m := len(base); m >= 2 && base[m-1] == base[m-2] && !isVowel(base[m-1]) {
			add(base[:m-1]) // runner → run
		}
	} else {
		add(t + "er")
		if c := t[n-1]; c == 'e' {
			add(t[:n-1] + "er") // bake → baker
		} else if !isVowel(c) && isVowel(t[n-2]) && !isVowel(t[n-3]) && c != 'w' && c != 'x' && c != 'y' {
			add(t + string(c) + "er") // run → runner
		}
	}
	if t[n-1] == 'i' && n > 5 {
		add(t[:n-1]) // injuri → injur
	} else if !isVowel(t[n-1]) && n >= 5 {
		add(t + "i") // injur → injuri
	}
	return out
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }
