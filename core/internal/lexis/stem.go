package lexis

// Stem returns the Porter stem of a lower-case word (M. F. Porter, "An
// algorithm for suffix stripping", 1980, with the two departures of his own
// later implementation: "bli" → "ble" and "logi" → "log" in step 2). Words
// of one or two letters and words with any byte outside a–z are returned
// unchanged. Stem may reuse w's storage.
func Stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	w = replaceSuffix(w, step2, 0)
	w = replaceSuffix(w, step3, 0)
	w = step4(w)
	w = step5(w)
	return w
}

// cons reports whether w[i] is a consonant: not a, e, i, o, u, and not a
// "y" after a consonant.
func cons(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !cons(w, i-1)
	}
	return true
}

// measure is m in [C](VC){m}[V]: the number of vowel-consonant sequences.
func measure(w []byte) int {
	m, i, n := 0, 0, len(w)
	for i < n && cons(w, i) {
		i++
	}
	for i < n {
		for i < n && !cons(w, i) {
			i++
		}
		if i == n {
			break
		}
		for i < n && cons(w, i) {
			i++
		}
		m++
	}
	return m
}

func hasVowel(w []byte) bool {
	for i := range w {
		if !cons(w, i) {
			return true
		}
	}
	return false
}

func doubleCons(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && cons(w, n-1)
}

// cvc reports consonant-vowel-consonant at the end, the last not w, x or y.
func cvc(w []byte) bool {
	n := len(w)
	if n < 3 || !cons(w, n-3) || cons(w, n-2) || !cons(w, n-1) {
		return false
	}
	c := w[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"), hasSuffix(w, "ies"):
		return w[:len(w)-2]
	case hasSuffix(w, "ss"):
		return w
	case hasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

func step1b(w []byte) []byte {
	if hasSuffix(w, "eed") {
		if measure(w[:len(w)-3]) > 0 {
			return w[:len(w)-1]
		}
		return w
	}
	var stem []byte
	switch {
	case hasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		stem = w[:len(w)-2]
	case hasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		stem = w[:len(w)-3]
	default:
		return w
	}
	switch {
	case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
		return append(stem, 'e')
	case doubleCons(stem):
		if c := stem[len(stem)-1]; c != 'l' && c != 's' && c != 'z' {
			return stem[:len(stem)-1]
		}
		return stem
	case measure(stem) == 1 && cvc(stem):
		return append(stem, 'e')
	}
	return stem
}

func step1c(w []byte) []byte {
	if n := len(w); w[n-1] == 'y' && hasVowel(w[:n-1]) {
		w[n-1] = 'i'
	}
	return w
}

// rule replaces suffix from by to.
type rule struct{ from, to string }

// Longest suffixes first: only the longest that matches is considered.
var step2 = []rule{
	{"ational", "ate"}, {"ization", "ize"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"tional", "tion"}, {"biliti", "ble"}, {"ation", "ate"}, {"alism", "al"}, {"aliti", "al"},
	{"iviti", "ive"}, {"entli", "ent"}, {"ousli", "ous"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"alli", "al"}, {"ator", "ate"}, {"logi", "log"}, {"bli", "ble"}, {"eli", "e"},
}

var step3 = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ness", ""}, {"ful", ""},
}

// replaceSuffix applies the first (longest) rule whose suffix ends w, when
// the stem before it has a measure above minM.
func replaceSuffix(w []byte, rules []rule, minM int) []byte {
	for _, r := range rules {
		if hasSuffix(w, r.from) {
			stem := w[:len(w)-len(r.from)]
			if measure(stem) > minM {
				return append(stem, r.to...)
			}
			return w
		}
	}
	return w
}

var step4Suffixes = []string{
	"ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
	"ion", "al", "er", "ic", "ou",
}

func step4(w []byte) []byte {
	for _, s := range step4Suffixes {
		if hasSuffix(w, s) {
			stem := w[:len(w)-len(s)]
			if measure(stem) <= 1 {
				return w
			}
			if s == "ion" && !hasSuffix(stem, "s") && !hasSuffix(stem, "t") {
				return w
			}
			return stem
		}
	}
	return w
}

func step5(w []byte) []byte {
	if n := len(w); w[n-1] == 'e' {
		stem := w[:n-1]
		if m := measure(stem); m > 1 || m == 1 && !cvc(stem) {
			w = stem
		}
	}
	if n := len(w); n >= 2 && w[n-1] == 'l' && w[n-2] == 'l' && measure(w) > 1 {
		w = w[:n-1]
	}
	return w
}
