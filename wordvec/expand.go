package wordvec

import (
	"context"
	"math"
	"sort"
	"sync"
)

// Query expansion: each query word's nearest words in the table, which a
// hybrid search adds to its BM25 ranking at a fraction of a word's weight
// (search.QueryExpander).
const (
	// expandVocabulary bounds the words a neighbour is drawn from: the
	// most frequent ones, which are the words notes are written in.
	expandVocabulary = 30000
	// expandSkip leaves out the most frequent words (function words and
	// the like), as query words and as neighbours.
	expandSkip = 250
	// expandPerWord and expandMinCosine bound the neighbours of a word.
	expandPerWord   = 3
	expandMinCosine = 0.62
)

// expander holds a table's vector norms (of the expandVocabulary most
// frequent words) and each word's neighbours by rank, made on first use.
// The zero value is ready.
type expander struct {
	once       sync.Once
	nv         []float32
	neighbours sync.Map // rank → []string
}

// norms returns the norms of t's first expandVocabulary vectors.
func (x *expander) norms(t *table) []float32 {
	x.once.Do(func() {
		x.nv = make([]float32, min(expandVocabulary, t.n))
		for i := range x.nv {
			var s int32
			for _, b := range t.vector(i) {
				s += int32(int8(b)) * int32(int8(b))
			}
			x.nv[i] = float32(math.Sqrt(float64(s)))
		}
	})
	return x.nv
}

// ExpandQuery returns words related to query's words: for each word the
// table knows (past the most frequent), up to three of its nearest words
// among the 30,000 most frequent, by cosine of their vectors (at least
// 0.62). The result is deterministic; the first call for a word scans
// the vocabulary (about a millisecond), later ones are cached.
func (e *Embedder) ExpandQuery(ctx context.Context, query string) ([]string, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := e.t
	if t == nil {
		return nil, nil
	}
	x := &t.exp
	nv := x.norms(t)
	var out []string
	var scratch []byte
	seen := map[int]bool{}
	tokens(query, nil, func(word []byte) {
		i := t.lookup(word, &scratch)
		if i < expandSkip || i >= len(nv) || seen[i] {
			return
		}
		seen[i] = true
		out = append(out, x.neighboursOf(t, i, nv)...)
	})
	return out, nil
}

// neighboursOf returns the neighbours of the word of rank i (< len(nv))
// in t, made once.
func (x *expander) neighboursOf(t *table, i int, nv []float32) []string {
	if v, ok := x.neighbours.Load(i); ok {
		return v.([]string)
	}
	words := nearest(t, i, nv, expandPerWord, expandMinCosine, func(int) bool { return true })
	x.neighbours.Store(i, words)
	return words
}

// nearest returns up to n words nearest the word of rank i (< len(nv)) in
// t, by cosine, at least minCos, among the ranks from expandSkip to
// len(nv) that keep accepts; ties go to the more frequent word.
func nearest(t *table, i int, nv []float32, n int, minCos float32, keep func(rank int) bool) []string {
	a := t.vector(i)
	type cand struct {
		j   int
		cos float32
	}
	var best []cand
	for j := expandSkip; j < len(nv); j++ {
		if j == i || nv[j] == 0 || !keep(j) {
			continue
		}
		var dot int32
		for k, b := range t.vector(j) {
			dot += int32(int8(a[k])) * int32(int8(b))
		}
		if c := float32(dot) / (nv[i] * nv[j]); c >= minCos {
			best = append(best, cand{j, c})
		}
	}
	sort.Slice(best, func(x, y int) bool {
		if best[x].cos != best[y].cos {
			return best[x].cos > best[y].cos
		}
		return best[x].j < best[y].j
	})
	words := []string{}
	for _, c := range best[:min(len(best), n)] {
		words = append(words, string(t.word(c.j)))
	}
	return words
}

// ExpandQuery expands query with New's embedder, making it first.
func (l *lazy) ExpandQuery(ctx context.Context, query string) ([]string, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	e, err := l.open()
	if err != nil {
		return nil, err
	}
	return e.ExpandQuery(ctx, query)
}
