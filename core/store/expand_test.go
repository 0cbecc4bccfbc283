package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// flatExpander gives every text the same vector (so vectors rank nothing)
// and expands queries from a fixed table, or fails.
type flatExpander struct {
	related map[string][]string
	err     error
}

func (e *flatExpander) Model() string { return "flat-1" }

func (e *flatExpander) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0}
	}
	return out, nil
}

func (e *flatExpander) ExpandQuery(ctx context.Context, query string) ([]string, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.related[query], nil
}

var _ search.QueryExpander = (*flatExpander)(nil)

// TestHybridSearchExpandsQueries: a hybrid search ranks a note that only
// an expansion word matches above the rest, the query's own words still
// come first, a failing expander changes nothing but the expansion, and
// BM25 and literal searches never ask the expander.
func TestHybridSearchExpandsQueries(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		exp  *flatExpander
		want []string // the first files, in order
	}{
		{"expands", &flatExpander{related: map[string][]string{"spouse job": {"partner", "wife", "occupation"}}}, []string{"partner.md", "job.md"}},
		{"expander fails", &flatExpander{err: errors.New("down")}, []string{"job.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store.New(newMemDriver(t), &store.Options{Embedder: tc.exp})
			defer s.Close()
			for p, c := range map[string]string{
				"u/main/partner.md": "- Partner Joana is an architect.\n",
				"u/main/job.md":     "- Job: data scientist at a bank.\n",
				"u/main/garden.md":  "- Grows basil and mint on the balcony.\n",
			} {
				if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.WaitIndexed(ctx); err != nil {
				t.Fatal(err)
			}
			req := search.Request{Prefix: "u/main/", Query: "spouse job", Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 4000}
			res, err := s.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Matches {
				got = append(got, m.Path[len("u/main/"):])
			}
			// job.md matches a query word and ranks first; partner.md
			// (only through "partner") next, when the expander answers.
			if len(got) < len(tc.want) {
				t.Fatalf("matches %v, want %v first", got, tc.want)
			}
			first := got[:len(tc.want)]
			if tc.exp.err == nil && (first[0] != "job.md" || first[1] != "partner.md") {
				t.Errorf("matches %v: want job.md (a query word), then partner.md (an expansion), then the rest", got)
			}
			if tc.exp.err != nil && first[0] != "job.md" {
				t.Errorf("matches %v: want job.md first", got)
			}
			for _, mode := range []search.Mode{search.BM25, search.Literal} {
				req.Mode = mode
				res, err := s.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range res.Matches {
					if m.Path == "u/main/partner.md" {
						t.Errorf("%s search matched partner.md: only hybrid search asks the QueryExpander", mode)
					}
				}
			}
		})
	}
}

// TestBM25AddsRelatedWords: without an embedder, a BM25 search finds a
// note written in other words through the related-words table ("workout"
// → "gym"), below a note with the query's own word, and a literal search
// does not.
func TestBM25AddsRelatedWords(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	for p, c := range map[string]string{
		"u/main/fitness.md": "- Bouldering at the gym three evenings a week.\n",
		"u/main/routine.md": "- A short workout before breakfast.\n",
		"u/main/food.md":    "- Pescatarian; oat milk in coffee.\n",
	} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	find := func(mode search.Mode) []string {
		t.Helper()
		res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "workout habits", Mode: mode, Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 4000})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.Path[len("u/main/"):])
		}
		return got
	}
	if got := find(search.BM25); len(got) != 2 || got[0] != "routine.md" || got[1] != "fitness.md" {
		t.Errorf("BM25: matches %v, want routine.md (the query's word), then fitness.md (a related word)", got)
	}
	if got := find(search.Literal); len(got) != 1 || got[0] != "routine.md" {
		t.Errorf("literal: matches %v, want routine.md alone", got)
	}
}

// TestBM25RelatedOddQueries: queries of stop words only, of many words,
// of one very long word, of other scripts or of punctuation search
// without error, with the related words of what words they have.
func TestBM25RelatedOddQueries(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	for p, c := range map[string]string{
		"u/main/fitness.md": "- Bouldering at the gym three evenings a week.\n",
		"u/main/tokyo.md":   "- 東京で働く. Москва зимой.\n",
	} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("workout%d workout", i))
	}
	for q, want := range map[string]int{
		"the of and":                            1, // stop words only are kept: "the"
		strings.Join(many, " "):                 1, // workout → gym
		strings.Repeat("workout", 3000):         0,
		"東京 Москва":                             1,
		"... ''' ’s":                            0,
		"Workout's workouts WORKOUT!":           1,
		"workout " + strings.Repeat("x", 70000): 1,
	} {
		res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: q, Mode: search.BM25, Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 4000})
		if err != nil {
			t.Fatalf("%.40q: %v", q, err)
		}
		if len(res.Matches) != want {
			t.Errorf("%.40q: %d matches, want %d", q, len(res.Matches), want)
		}
	}
}

// TestBM25RelatedWordsCanOutrank: related words count 0.3 of a query word
// each, so several of them in a short note outweigh the query's word once
// in a longer note, as search.BM25's doc says: the query's own words rank
// first mostly, not always.
func TestBM25RelatedWordsCanOutrank(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), nil)
	defer s.Close()
	for p, c := range map[string]string{
		"u/main/routine.md": "- A short workout before breakfast, then a long walk to the office and coffee with colleagues.\n",
		"u/main/fitness.md": "- Gym and fitness: a new regimen of exercise.\n",
		"u/main/food.md":    "- Pescatarian; oat milk in coffee.\n",
		"u/main/music.md":   "- Plays bass in a jazz trio.\n",
	} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "workout", Mode: search.BM25, Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 4000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, m.Path[len("u/main/"):])
	}
	if len(got) != 2 || got[0] != "fitness.md" || got[1] != "routine.md" {
		t.Errorf("matches %v, want fitness.md (gym, fitness, regimen) above routine.md (workout once)", got)
	}
}
