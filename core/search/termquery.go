// The term index's query: the top candidates of a folder for a BM25
// query, and the files changed since they were indexed.

package search

import (
	"slices"
	"strings"
	"sync"
)

// ranked is one doc's score from the index.
type ranked struct {
	doc   int32
	score float64
}

// scratch is one ranking's per-doc arrays, reused across searches.
type scratch struct {
	score []float64
	mark  []int32 // the group that last touched the doc, plus one
	body  []float64
	name  []float64
}

var scratches sync.Pool

// top ranks the live docs of fi that bq's terms match (those whose path
// starts with prefix) by BM25 with the whole folder's statistics and
// returns the best k paths, the statistics, and the number of files the
// ranking covered (the live docs under prefix). It works one group of
// terms at a time over dense per-doc arrays: a pass for each group's
// document frequency, then one that adds each group's saturated weight to
// its docs' scores, so its cost is the postings of the query's terms.
//
// With floor > 0 (a search that weighs recency), every file whose score is
// at least floor times the limit-th best's follows the k best, best first:
// recency can lift any of them into the top limit, so each must be read.
func (fi *folderIndex) top(bq *bm25Query, prefix string, k, limit int, floor float64) ([]string, *corpusStats, int) {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	q := bq.q
	n := len(fi.docs)
	sc, _ := scratches.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer scratches.Put(sc)
	grow := func(a []float64) []float64 {
		if cap(a) < n {
			return make([]float64, n)
		}
		a = a[:n]
		clear(a)
		return a
	}
	sc.score, sc.body, sc.name = grow(sc.score), grow(sc.body), grow(sc.name)
	if cap(sc.mark) < n {
		sc.mark = make([]int32, n)
	}
	sc.mark = sc.mark[:n]
	clear(sc.mark)
	// The name's terms count in their slot's group (as bm25's scan counts
	// a name: each term once, where bq.slots puts it).
	nameTerms := make([][]string, len(q))
	for t, sl := range bq.slots {
		nameTerms[sl.group] = append(nameTerms[sl.group], t)
	}
	// each calls fn for every live posting of group j: its doc, body
	// frequency (variants weighted) and name frequency.
	each := func(j int, fn func(doc int32, body, name float64)) {
		for v, t := range q[j] {
			w := 1.0
			if v > 0 {
				w = variantWeight
			}
			for _, pt := range fi.terms[t] {
				if pt.body > 0 && fi.docs[pt.doc].live {
					fn(pt.doc, w*float64(pt.body), 0)
				}
			}
		}
		for _, t := range nameTerms[j] {
			w := bq.slots[t].weight
			for _, pt := range fi.terms[t] {
				if pt.name > 0 && fi.docs[pt.doc].live {
					fn(pt.doc, 0, w*float64(pt.name))
				}
			}
		}
	}
	df := make([]int, len(q))
	for j := range q {
		stamp := int32(j + 1)
		each(j, func(doc int32, _, _ float64) {
			if sc.mark[doc] != stamp {
				sc.mark[doc] = stamp
				df[j]++
			}
		})
	}
	live := float64(max(fi.live, 1))
	st := &corpusStats{n: float64(fi.live), df: df, avgBody: max(float64(fi.sumBody)/live, 1), avgName: max(float64(fi.sumName)/live, 1)}
	idf := bq.idf(st)
	clear(sc.mark)
	var touched []int32
	for j := range q {
		if idf[j] == 0 {
			continue
		}
		stamp := int32(j + 1)
		var docs []int32
		each(j, func(doc int32, body, name float64) {
			if sc.mark[doc] != stamp {
				if sc.mark[doc] == 0 {
					touched = append(touched, doc)
				}
				sc.mark[doc] = stamp
				sc.body[doc], sc.name[doc] = 0, 0
				docs = append(docs, doc)
			}
			sc.body[doc] += body
			sc.name[doc] += name
		})
		for _, doc := range docs {
			d := &fi.docs[doc]
			normBody := 1 - bm25B + bm25B*float64(d.bodyLen)/st.avgBody
			normName := 1 - bm25B + bm25B*float64(d.nameLen)/st.avgName
			if tf := sc.body[doc]/normBody + nameWeight*sc.name[doc]/normName; tf > 0 {
				sc.score[doc] += idf[j] * tf * (bm25K1 + 1) / (tf + bm25K1)
			}
		}
	}
	covered := fi.live
	if prefix != fi.folder {
		covered = 0
		for _, d := range fi.docs {
			if d.live && strings.HasPrefix(d.path, prefix) {
				covered++
			}
		}
	}
	better := func(a, b ranked) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return fi.docs[a.doc].path < fi.docs[b.doc].path
	}
	// The k best, kept in a slice sorted worst first.
	best := make([]ranked, 0, k+1)
	for _, doc := range touched {
		r := ranked{doc, sc.score[doc]}
		if r.score <= 0 || !strings.HasPrefix(fi.docs[doc].path, prefix) {
			continue
		}
		best = keepBest(best, r, k, better)
	}
	paths := make([]string, len(best))
	for i := range best {
		paths[i] = fi.docs[best[len(best)-1-i].doc].path
	}
	if floor > 0 && limit > 0 && len(best) == k && k >= limit {
		bar := best[len(best)-limit].score * floor
		var near []ranked
		for _, doc := range touched {
			r := ranked{doc, sc.score[doc]}
			if r.score >= bar && r.score > 0 && strings.HasPrefix(fi.docs[doc].path, prefix) && better(best[0], r) {
				near = append(near, r) // below the k best, within reach of the top limit
			}
		}
		slices.SortFunc(near, func(a, b ranked) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		for _, r := range near {
			paths = append(paths, fi.docs[r.doc].path)
		}
	}
	return paths, st, covered
}

// pendingIn returns the paths of folder changed and not yet applied.
func (ti *termIndex) pendingIn(folder string) []string {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	var out []string
	for p := range ti.pending[folder] {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// keepBest adds c to best, kept sorted worst first and at most k long, when
// it is better than the worst there (better orders two candidates).
func keepBest[T any](best []T, c T, k int, better func(a, b T) bool) []T {
	if len(best) == k && !better(c, best[0]) {
		return best
	}
	i, _ := slices.BinarySearchFunc(best, c, func(a, b T) int {
		if better(a, b) {
			return 1
		}
		return -1
	})
	best = slices.Insert(best, i, c)
	if len(best) > k {
		best = best[1:]
	}
	return best
}
