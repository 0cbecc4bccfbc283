package retrieval

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestConversationsPeopleSet(t *testing.T) {
	a, b := ConversationsPeople(peoplePairs, peopleSeed), ConversationsPeople(peoplePairs, peopleSeed)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the generator is not deterministic")
	}
	if reflect.DeepEqual(ConversationsPeople(2, peopleSeed), ConversationsPeople(2, peopleSeed+1)) {
		t.Fatal("another seed gives the same set")
	}
	if len(a.Users) != peoplePairs {
		t.Fatalf("%d pairs", len(a.Users))
	}
	kinds := map[string]int{}
	names := map[string]string{}  // name → its pair
	sentences := map[string]int{} // filler sentences over the whole set
	for ns, files := range a.Users {
		if n := len(files); n < 20 || n > 28 {
			t.Fatalf("%s: %d sessions", ns, n)
		}
		var pair []string
		for name, c := range files {
			if n := utf8.RuneCountInString(c); n < peopleMinRunes || n > peopleMaxRunes {
				t.Fatalf("%s/%s: %d characters", ns, name, n)
			}
			if !strings.HasPrefix(c, "#") || strings.Contains(c, "{") {
				t.Fatalf("%s/%s does not look like a session:\n%s", ns, name, c)
			}
			speakers := map[string]bool{}
			for _, turn := range strings.Split(c, "\n\n")[1:] {
				who, text, ok := strings.Cut(turn, ": ")
				if !ok || strings.ContainsAny(who, " \n") {
					t.Fatalf("%s/%s: turn %q has no speaker", ns, name, turn)
				}
				speakers[who] = true
				for _, s := range strings.SplitAfter(text, ". ") {
					if r, _ := utf8.DecodeRuneInString(s); unicode.IsLower(r) {
						t.Fatalf("%s/%s: sentence %q in %q starts in lower case", ns, name, s, turn)
					}
					sentences[strings.TrimSpace(s)]++
				}
			}
			if len(speakers) != 2 {
				t.Fatalf("%s/%s: speakers %v", ns, name, speakers)
			}
			if pair == nil {
				for s := range speakers {
					pair = append(pair, s)
				}
			}
			for _, s := range pair {
				if !speakers[s] {
					t.Fatalf("%s/%s: %s does not speak", ns, name, s)
				}
			}
		}
		for _, s := range pair {
			if names[s] != "" {
				t.Fatalf("%s speaks in %s and %s", s, names[s], ns)
			}
			names[s] = ns
		}
		qs := a.Queries[ns]
		if len(qs) != 18 {
			t.Fatalf("%s: %d queries", ns, len(qs))
		}
		for _, q := range qs {
			kinds[q.Kind]++
			kinds["wording:"+q.Wording]++
			f, who := peopleFactOf(t, q, pair)
			seen := map[string]bool{}
			for _, w := range q.Want {
				if files[w] == "" || seen[w] {
					t.Fatalf("%s: %q wants %v: missing or twice", ns, q.Q, q.Want)
				}
				seen[w] = true
				if !keyIn(f.key, who+": ", files[w]) {
					t.Fatalf("%s: %q: %s has no turn of %s's with %q", ns, q.Q, w, who, f.key)
				}
			}
			lo, hi := 1, 1
			switch q.Kind {
			case peopleMulti:
				lo, hi = 2, 4
			case peopleInference:
				hi = 2
			}
			if n := len(q.Want); n < lo || n > hi {
				t.Fatalf("%s: %s question %q has %d evidence sessions", ns, q.Kind, q.Q, n)
			}
		}
	}
	for _, k := range peopleKinds {
		if kinds[k.kind] != 2*k.per*peoplePairs {
			t.Fatalf("kinds = %v", kinds)
		}
	}
	if d, p := kinds["wording:direct"], kinds["wording:paraphrase"]; d < 6*peoplePairs || p < 6*peoplePairs {
		t.Fatalf("wordings = %v", kinds)
	}
	// The filler is varied: no sentence is in more than a fifth of the
	// sessions.
	most, sessions, top := 0, 0, ""
	for _, files := range a.Users {
		sessions += len(files)
	}
	for s, n := range sentences {
		if n > most && len(s) > 30 {
			most, top = n, s
		}
	}
	if most*5 > sessions {
		t.Fatalf("a sentence is used %d times in %d sessions: %q", most, sessions, top)
	}
}

// peopleAsked matches each question phrasing of personFacts: the first
// group is the name asked about.
var peopleAsked = func() (res [][]*regexp.Regexp) {
	for _, f := range personFacts {
		var fr []*regexp.Regexp
		for _, ask := range f.ask {
			re := strings.NewReplacer(`\{n\}`, `(\pL+)`, `\{p\}`, "(?:her|his)", `\{v\}`, ".+").Replace(regexp.QuoteMeta(ask))
			fr = append(fr, regexp.MustCompile("^"+re+"$"))
		}
		res = append(res, fr)
	}
	return res
}()

// peopleFactOf returns the template q was asked from and the name of the
// person asked about (one of pair).
func peopleFactOf(t *testing.T, q Query, pair []string) (personFact, string) {
	t.Helper()
	for i, f := range personFacts {
		for _, re := range peopleAsked[i] {
			if m := re.FindStringSubmatch(q.Q); f.kind == q.Kind && m != nil && slices.Contains(pair, m[1]) {
				return f, m[1]
			}
		}
	}
	t.Fatalf("%q is asked from no template", q.Q)
	return personFact{}, ""
}

var keyRes sync.Map // key → *regexp.Regexp

// keyIn reports whether a line of text starting with prefix has a word
// starting with key, whatever the case.
func keyIn(key, prefix, text string) bool {
	re, ok := keyRes.Load(key)
	if !ok {
		re, _ = keyRes.LoadOrStore(key, regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(key)))
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) && re.(*regexp.Regexp).MatchString(line) {
			return true
		}
	}
	return false
}

// TestPersonFactTemplates checks the templates: each has tellings, replies,
// a direct question and paraphrases, distractors and a known topic; the
// key is in every telling (or inference part) and the direct question
// and in no paraphrase; a list has at least 3 parts, 2 or more told.
func TestPersonFactTemplates(t *testing.T) {
	count := map[string]int{}
	for i, f := range personFacts {
		count[f.kind]++
		if _, ok := chatTopics[f.topic]; !ok || f.key == "" || len(f.tell) == 0 || len(f.reply) == 0 || len(f.ask) < 2 || len(f.near) < 2 || len(f.values) == 0 {
			t.Fatalf("fact %d (%s, %s) is incomplete", i, f.kind, f.key)
		}
		if !keyIn(f.key, "", f.ask[0]) {
			t.Fatalf("fact %d: direct question %q lacks %q", i, f.ask[0], f.key)
		}
		for _, ask := range f.ask[1:] {
			if keyIn(f.key, "", ask) {
				t.Fatalf("fact %d: paraphrase %q has %q", i, ask, f.key)
			}
		}
		for _, v := range f.values {
			parts := strings.Split(v, "|")
			if f.kind == peopleMulti && (len(parts) < 3 || f.minParts < 2) || f.kind == peopleInference && len(parts) < 2 ||
				(f.kind == peopleSingle || f.kind == peopleTemporal) && len(parts) != 1 {
				t.Fatalf("fact %d (%s): value %q", i, f.kind, v)
			}
			for _, p := range parts {
				for _, tell := range f.tell {
					if s := strings.ReplaceAll(tell, "{v}", p); !keyIn(f.key, "", s) {
						t.Fatalf("fact %d: telling %q lacks %q", i, s, f.key)
					}
				}
			}
		}
		if (f.kind == peopleTemporal) != strings.Contains(strings.Join(f.tell, ""), "{w}") {
			t.Fatalf("fact %d: a temporal telling holds {w}, others not", i)
		}
	}
	for _, k := range peopleKinds {
		if count[k.kind] < 2*k.per+2 {
			t.Fatalf("%d %s templates: too few for two friends", count[k.kind], k.kind)
		}
	}
	for _, name := range chatTopicNames {
		if tp := chatTopics[name]; len(tp.says) < 5 || len(tp.asks) < 3 || len(tp.answers) < len(tp.asks) {
			t.Fatalf("topic %s is thin", name)
		}
	}
	if len(chatTopicNames) != len(chatTopics) {
		t.Fatalf("chatTopicNames lists %d of %d topics", len(chatTopicNames), len(chatTopics))
	}
}

func TestConversationsPeopleBM25BeatsLiteral(t *testing.T) {
	bm25BeatsLiteral(t, ConversationsPeople(6, peopleSeed))
}
