package retrieval

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConversationsHardSet(t *testing.T) {
	a, b := ConversationsHard(hardUsers, hardSeed), ConversationsHard(hardUsers, hardSeed)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the generator is not deterministic")
	}
	if reflect.DeepEqual(a, ConversationsHard(hardUsers, hardSeed+1)) {
		t.Fatal("another seed gives the same set")
	}
	if len(a.Users) != hardUsers {
		t.Fatalf("%d users", len(a.Users))
	}
	kinds := map[string]int{}
	asked := map[string]bool{} // question phrasings seen
	for ns, files := range a.Users {
		if n := len(files); n < 22 || n > 30 {
			t.Fatalf("%s: %d sessions", ns, n)
		}
		for name, c := range files {
			if n := utf8.RuneCountInString(c); n < hardMinRunes || n > hardMaxRunes {
				t.Fatalf("%s/%s: %d characters", ns, name, n)
			}
			if !strings.HasPrefix(c, "# Session ") || !strings.Contains(c, "\nAssistant: ") {
				t.Fatalf("%s/%s does not look like a session:\n%s", ns, name, c)
			}
		}
		qs := a.Queries[ns]
		if len(qs) != 10 {
			t.Fatalf("%s: %d queries", ns, len(qs))
		}
		for _, q := range qs {
			kinds[q.Kind]++
			kinds["wording:"+q.Wording]++
			asked[q.Q] = true
			if strings.Contains(q.Q, "{v}") {
				t.Fatalf("%s: %q keeps a placeholder", ns, q.Q)
			}
			seen := map[string]bool{}
			for _, w := range q.Want {
				if files[w] == "" || seen[w] {
					t.Fatalf("%s: %q wants %v: missing or twice", ns, q.Q, q.Want)
				}
				seen[w] = true
			}
			lo, hi := 1, 1
			switch q.Kind {
			case kindMulti:
				lo, hi = 2, 4
			case kindUpdate:
				lo, hi = 2, 3
			case kindTemporal:
				hi = 2
			}
			if n := len(q.Want); n < lo || n > hi {
				t.Fatalf("%s: %s question %q has %d evidence sessions", ns, q.Kind, q.Q, n)
			}
		}
	}
	for _, k := range hardKinds {
		if kinds[k.kind] != k.per*hardUsers {
			t.Fatalf("kinds = %v", kinds)
		}
	}
	if d, p := kinds["wording:direct"], kinds["wording:paraphrase"]; d < 3*hardUsers || p < 3*hardUsers || d+p != 10*hardUsers {
		t.Fatalf("wordings = %v", kinds)
	}
	if len(hardFacts) < 40 || len(asked) < 60 {
		t.Fatalf("%d fact templates, %d question phrasings asked", len(hardFacts), len(asked))
	}
}

// TestHardFactTemplates checks the templates: each has phrasings to tell
// and to ask, distractors, a known topic, values with as many parts as
// its kind needs and, in a question, no value that the fact's value would
// fill in except where the kind asks about it.
func TestHardFactTemplates(t *testing.T) {
	for i, f := range hardFacts {
		if _, ok := topics[f.topic]; !ok || len(f.tell) == 0 || len(f.reply) == 0 || len(f.ask) < 2 || len(f.near) < 2 || len(f.values) == 0 {
			t.Fatalf("fact %d (%s, %s) is incomplete", i, f.kind, f.topic)
		}
		for _, v := range f.values {
			n := len(strings.Split(v, "|"))
			switch {
			case f.kind == kindMulti && n < 4, f.kind == kindUpdate && (n < 2 || n > 3), f.kind == kindTemporal && n > 2,
				(f.kind == kindUser || f.kind == kindAssistant || f.kind == kindPreference) && n != 1:
				t.Fatalf("fact %d (%s): value %q", i, f.kind, v)
			}
		}
		for _, tells := range f.tell {
			if len(tells) < 2 {
				t.Fatalf("fact %d (%s): one phrasing only: %q", i, f.kind, tells)
			}
		}
	}
	for _, name := range topicNames {
		if tp := topics[name]; len(tp.asks) < 5 || len(tp.points) < 8 {
			t.Fatalf("topic %s is thin", name)
		}
	}
	if len(topicNames) != len(topics) {
		t.Fatalf("topicNames lists %d of %d topics", len(topicNames), len(topics))
	}
}

// TestUpdateEvidenceInOrder checks that an update's latest value is told
// in its latest evidence session.
func TestUpdateEvidenceInOrder(t *testing.T) {
	set := ConversationsHard(5, hardSeed)
	n := 0
	for ns, qs := range set.Queries {
		for _, q := range qs {
			if q.Kind != kindUpdate {
				continue
			}
			for k := 1; k < len(q.Want); k++ {
				if q.Want[k-1] >= q.Want[k] {
					t.Fatalf("%s: %q: evidence %v out of order", ns, q.Q, q.Want)
				}
			}
			n++
		}
	}
	if n != 2*5 {
		t.Fatalf("%d update questions", n)
	}
}

func TestConversationsHardBM25BeatsLiteral(t *testing.T) {
	bm25BeatsLiteral(t, ConversationsHard(8, hardSeed))
}
