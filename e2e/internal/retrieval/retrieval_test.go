package retrieval

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// The committed conversation sets: 40 users, seed 28, each; the people
// set, 22 pairs of friends (396 questions), seed 28.
const (
	convUsers, convSeed     = 40, 28
	hardUsers, hardSeed     = 40, 28
	peoplePairs, peopleSeed = 22, 28
)

func TestConversationSet(t *testing.T) {
	a, b := Conversations(convUsers, convSeed), Conversations(convUsers, convSeed)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the generator is not deterministic")
	}
	queries := 0
	for ns, files := range a.Users {
		if len(files) < 10 {
			t.Fatalf("%s: %d sessions", ns, len(files))
		}
		for name, c := range files {
			if n := utf8.RuneCountInString(c); n < 2000 || n > 6000 {
				t.Fatalf("%s/%s: %d characters", ns, name, n)
			}
		}
		for _, q := range a.Queries[ns] {
			queries++
			if len(q.Want) == 0 {
				t.Fatalf("%s: %q has no evidence", ns, q.Q)
			}
			for _, w := range q.Want {
				if files[w] == "" {
					t.Fatalf("%s: %q wants missing %s", ns, q.Q, w)
				}
			}
		}
	}
	if queries != 6*convUsers {
		t.Fatalf("%d queries", queries)
	}
}

func TestEvaluate(t *testing.T) {
	set := Set{
		Users: map[string]map[string]string{"u": {"a.md": "apples and pears", "b.md": "pears only", "c.md": "nothing"}},
		Queries: map[string][]Query{"u": {
			{Q: "apples", Want: []string{"a.md"}, Kind: "x"},
			{Q: "pears", Want: []string{"a.md", "b.md"}, Kind: "y"},
			{Q: "plumbix", Want: []string{"c.md"}, Kind: "y", Wording: "w"}, // no such word, no related word
		}},
	}
	rep, err := Evaluate(t.Context(), set, search.BM25)
	if err != nil {
		t.Fatal(err)
	}
	// apples: a.md, then b.md through the related word "pears"; pears:
	// b.md (shorter) first, then a.md; plumbix: nothing.
	want := Scores{N: 3, Recall1: 2.0 / 3, Recall3: 2.0 / 3, Recall5: 2.0 / 3, All5: 2.0 / 3, MRR: 2.0 / 3, Results: 4.0 / 3}
	if got := *rep["all"]; got != want {
		t.Fatalf("all = %+v, want %+v", got, want)
	}
	if rep["x"].N != 1 || rep["y"].N != 2 || rep["wording:w"].N != 1 || rep["wording:w"].Recall5 != 0 ||
		!reflect.DeepEqual(rep.Kinds(), []string{"all", "wording:w", "x", "y"}) {
		t.Fatalf("kinds = %v", rep.Kinds())
	}
}

func TestConversationsBM25BeatsLiteral(t *testing.T) {
	bm25BeatsLiteral(t, Conversations(10, convSeed))
}

// bm25BeatsLiteral fails t unless BM25's session recall@5 on set is above
// literal search's.
func bm25BeatsLiteral(t *testing.T, set Set) {
	t.Helper()
	lit, err := Evaluate(t.Context(), set, search.Literal)
	if err != nil {
		t.Fatal(err)
	}
	bm, err := Evaluate(t.Context(), set, search.BM25)
	if err != nil {
		t.Fatal(err)
	}
	if bm["all"].Recall5 <= lit["all"].Recall5 {
		t.Fatalf("session recall@5: bm25 %.3f, literal %.3f", bm["all"].Recall5, lit["all"].Recall5)
	}
}

// devSet loads dev.json for the benchmarks. Not found ([ErrNoDevSet]: a
// clone without the shared/ folder beside it), it is no error: skip says
// why the set is left out. Found but unreadable or malformed, it is.
func devSet(dir string) (dev Set, skip string, err error) {
	path, err := FindDevSet(dir)
	if errors.Is(err, ErrNoDevSet) {
		return Set{}, "dev.json left out: " + err.Error(), nil
	}
	if err != nil {
		return Set{}, "", err
	}
	dev, err = LoadDevSet(path)
	return dev, "", err
}

// TestDevSetMissingIsASkip points the benchmarks' loader at a dev.json
// that is not there: the set is skipped, saying why, and nothing fails;
// one that is there but malformed still fails.
func TestDevSetMissingIsASkip(t *testing.T) {
	t.Setenv(DevSetEnv, filepath.Join(t.TempDir(), "missing.json"))
	if _, skip, err := devSet("."); err != nil || !strings.Contains(skip, "dev.json left out") || !strings.Contains(skip, DevSetEnv) {
		t.Fatalf("devSet with no dev.json = skip %q, error %v; want a skip naming %s", skip, err, DevSetEnv)
	}
	bad := filepath.Join(t.TempDir(), "dev.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(DevSetEnv, bad)
	if _, skip, err := devSet("."); err == nil || skip != "" {
		t.Fatalf("devSet with a malformed dev.json = skip %q, error %v; want an error", skip, err)
	}
}

func TestFindDevSetFailsClearly(t *testing.T) {
	t.Setenv(DevSetEnv, t.TempDir()+"/missing.json")
	if _, err := FindDevSet("."); err == nil || !strings.Contains(err.Error(), DevSetEnv) {
		t.Fatalf("FindDevSet = %v", err)
	}
}

var modes = []search.Mode{search.Literal, search.BM25}

// BenchmarkRetrieval reports search quality through search_memory with
// default limits: on dev.json and the three notes sets (recall@1, recall@3, MRR
// per mode and query kind) and on the three generated conversation sets and
// the hand-written one (session
// recall@5, every evidence session in the first 5, MRR), evaluated once
// per mode; ns/op is one
// search_memory call, round-robin over the set's queries. Without dev.json
// (a clone without shared/ beside it) that set is left out, saying why, and
// the others run.
func BenchmarkRetrieval(b *testing.B) { benchmark(b, modes, nil) }

// benchmark runs the retrieval benchmark of each set in each mode, each on
// a store with a copy of opts (nil = defaults).
func benchmark(b *testing.B, modes []search.Mode, opts *store.Options) {
	var sets []Set
	dev, skip, err := devSet(".")
	switch {
	case err != nil:
		b.Fatal(err)
	case skip != "":
		// A clone without shared/ beside it: the other sets still run.
		// The line is printed as well: a skipped benchmark says nothing
		// without -v.
		fmt.Printf("%s: %s\n", b.Name(), skip)
		b.Run("dev", func(b *testing.B) { b.Skip(skip) })
	default:
		sets = append(sets, dev)
	}
	sets = append(sets, Notes(), Notes2(), Notes3(), Conversations(convUsers, convSeed),
		ConversationsHard(hardUsers, hardSeed), ConversationsPeople(peoplePairs, peopleSeed), Chats())
	for _, set := range sets {
		set = WithAbsent(set)
		for _, m := range modes {
			var o *store.Options
			if opts != nil {
				c := *opts
				o = &c
			}
			rep, err := EvaluateWith(b.Context(), set, m, o)
			if err != nil {
				b.Fatal(err)
			}
			r, err := NewRunnerWith(b.Context(), set, m, o)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", set.Name, m), func(b *testing.B) {
				if b.N == 1 { // logged on the first run
					rep.Log(b, set.Name, fmt.Sprint(m))
				}
				rep.ReportMetrics(b)
				b.ResetTimer()
				for i := range b.N {
					if _, _, err := r.Run(b.Context(), i); err != nil {
						b.Fatal(err)
					}
				}
			})
			_ = r.Close()
		}
	}
}

func TestNotesSet(t *testing.T) {
	set := Notes()
	kinds := map[string]int{}
	for _, qs := range set.Queries {
		for _, q := range qs {
			kinds[q.Kind]++
		}
	}
	for _, k := range []string{"exact", "morphology", "question", "paraphrase"} {
		if kinds[k] == 0 {
			t.Fatalf("no %s query: %v", k, kinds)
		}
	}
	if n := len(set.Users["priya"]); n < 25 || n > 40 {
		t.Fatalf("%d notes", n)
	}
}

// TestNotesBM25 pins the BM25 figures on the committed notes set: stop
// words in questions no longer rank notes that merely share them, and
// agent nouns meet their verbs ("runner" finds "Runs").
func TestNotesBM25(t *testing.T) {
	rep, err := Evaluate(t.Context(), Notes(), search.BM25)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep["all"].Recall3; r < 0.75 {
		t.Fatalf("notes bm25 recall@3 = %.3f, want ≥ 0.75", r)
	}
	if r := rep["morphology"].Recall3; r < 0.99 {
		t.Fatalf("notes bm25 morphology recall@3 = %.3f, want 1", r)
	}
}

// TestBlindNotesSets checks the shape of the notes sets written blind:
// one user's 25 notes and 40 queries in dev.json's mix of kinds, each
// wanting one of the notes.
func TestBlindNotesSets(t *testing.T) {
	for _, tc := range []struct {
		set Set
		ns  string
	}{{Notes2(), "daniel"}, {Notes3(), "graham"}} {
		t.Run(tc.set.Name, func(t *testing.T) {
			set := tc.set
			if len(set.Users) != 1 || len(set.Queries) != 1 {
				t.Fatalf("%d users, %d query namespaces; want 1 each", len(set.Users), len(set.Queries))
			}
			files := set.Users[tc.ns]
			if len(files) != 25 {
				t.Fatalf("%d notes, want 25", len(files))
			}
			qs := set.Queries[tc.ns]
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
			if want := map[string]int{"exact": 5, "morphology": 6, "question": 9, "paraphrase": 20}; !maps.Equal(kinds, want) {
				t.Errorf("kinds %v, want %v", kinds, want)
			}
		})
	}
}

// TestAgedWrites: the recency runs write each user's files in name order
// (a conversation's sessions as they happened), one day apart, every
// user's last on the span's last day, all in time order.
func TestAgedWrites(t *testing.T) {
	set := Set{Users: map[string]map[string]string{
		"a": {"session-02.md": "x", "session-01.md": "y", "session-03.md": "z"},
		"b": {"session-01.md": "w"},
	}}
	got, span := agedWrites(set)
	want := []agedWrite{{"a/main/session-01.md", "y", 0}, {"a/main/session-02.md", "x", 1}, {"a/main/session-03.md", "z", 2}, {"b/main/session-01.md", "w", 2}}
	if span != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("agedWrites = %v, span %d; want %v, span 3", got, span, want)
	}
}
