// BM25: the lexical ranking of a search and the passage shown for each hit.

package search

import (
	"cmp"
	"math"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/agentmem/agentmem/core/internal/lexis"
)

// BM25 parameters: the usual k1 and b, and the weight of the name field
// (BM25F): a term in a file's name counts as much as nameWeight
// occurrences in a body of average length.
const (
	bm25K1     = 1.2
	bm25B      = 0.75
	nameWeight = 2.0
	// variantWeight is what an occurrence of a query term's variant
	// ("runs" for "runner", see lexis.Variants) counts for, against 1 for
	// the term itself: the variant may be another word.
	variantWeight = 0.5
	// expansionWeight is what a related word counts for in BM25, against
	// 1 for a query word: one from the related-words table
	// (lexis.Related) or one a hybrid search's QueryExpander adds.
	expansionWeight = 0.3
	// relatedPerWord bounds the related words the table adds per query
	// word.
	relatedPerWord = 4
)

// occurrence is one query term found in a body, in runes.
type occurrence struct{ term, start, end int }

// doc is one candidate's statistics for the query terms: its body's
// length and the positions of each query term in it (rune offset pairs),
// its name's length and term frequencies.
type doc struct {
	bodyLen, nameLen int
	bodyPos          [][]uint32
	bodyTF, nameTF   []float64
}

// scanners keeps Scanners, with the stems they cached, between searches.
var scanners = sync.Pool{New: func() any { return lexis.NewScanner() }}

// bm25 scores cands by BM25F over two fields, the body and the
// scope-relative name without its extension ("food.md" → "food"), with
// document frequencies and average lengths from cands alone. Each query
// word brings up to relatedPerWord related words (lexis.Related) at
// expansionWeight, so a note in other words is found, mostly below the
// notes that have the query's own words (several related words can
// outweigh one query word). Each body's terms come from cache when that
// exact content was analysed before. It returns nil when the query has no
// terms (the caller then scores literally) and the files with a positive
// score otherwise.
func bm25(cache *analysisCache, prefix, query string, cands []candidate) []hit {
	return bm25Expanded(cache, prefix, query, nil, cands)
}

// bm25Expanded is bm25 with extra words (a [QueryExpander]'s) that count
// for expansionWeight of a query word each, like related words. Extra
// words that are query terms or related words already are left out.
func bm25Expanded(cache *analysisCache, prefix, query string, extra []string, cands []candidate) []hit {
	sc := scanners.Get().(*lexis.Scanner)
	defer scanners.Put(sc)
	bq := newBM25Query(sc, query, extra)
	if bq == nil {
		return nil
	}
	return bq.score(cache, sc, prefix, cands, nil)
}

// slot is a term's place in a query: its group (the query word or related
// word it stands for) and weight (1, or variantWeight for a variant).
type slot struct {
	group  int
	weight float64
}

// bm25Query is a query analysed for BM25: its groups of terms (q[j][0]
// the term, the rest its variants), the first own of them the query's
// own words and the rest related or expansion words (src[j] the query
// word a related word stands for, else -1), and every term's slot.
type bm25Query struct {
	q     [][]string
	src   []int
	own   int
	slots map[string]slot
	// Every term of q, group by group (group j's from flat[base[j]]),
	// and the same sorted (sorted[rank[f]] is flat[f]), to look them all
	// up in a body at once.
	flat, sorted []string
	base, rank   []int
}

// newBM25Query analyses query with its related words and the extra words,
// or returns nil when it has no terms.
func newBM25Query(sc *lexis.Scanner, query string, extra []string) *bm25Query {
	q := sc.QueryTerms(query)
	if len(q) == 0 {
		return nil
	}
	own := len(q)
	src := make([]int, len(q), len(q)+len(extra))
	for i := range src {
		src[i] = -1
	}
	related := sc.Related(query, q, relatedPerWord)
	if len(related) > 0 || len(extra) > 0 {
		seen := map[string]bool{}
		for _, g := range q {
			for _, t := range g {
				seen[t] = true
			}
		}
		for _, g := range related {
			for _, t := range g.Terms {
				seen[t] = true
				q = append(q, []string{t})
				src = append(src, g.Of)
			}
		}
		for _, g := range sc.QueryTerms(strings.Join(extra, " ")) {
			if !seen[g[0]] {
				seen[g[0]] = true
				q = append(q, g[:1])
				src = append(src, -1)
			}
		}
	}
	bq := &bm25Query{q: q, src: src, own: own, slots: make(map[string]slot, len(q)), base: make([]int, len(q))}
	for i, g := range q {
		for k, t := range g {
			w := 1.0
			if k > 0 {
				w = variantWeight
			}
			bq.slots[t] = slot{i, w}
		}
	}
	for j, g := range q {
		bq.base[j] = len(bq.flat)
		bq.flat = append(bq.flat, g...)
	}
	order := make([]int, len(bq.flat))
	for f := range order {
		order[f] = f
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(bq.flat[a], bq.flat[b]) })
	bq.sorted, bq.rank = make([]string, len(bq.flat)), make([]int, len(bq.flat))
	for r, f := range order {
		bq.sorted[r], bq.rank[f] = bq.flat[f], r
	}
	return bq
}

// corpusStats are the statistics BM25 weighs terms with: the number of
// files, each group's document frequency and the average lengths of the
// body and the name. A search over an index takes them from the whole
// scope; a scan from the files it read.
type corpusStats struct {
	n                float64
	df               []int
	avgBody, avgName float64
}

// idf returns each group's weight under st: BM25's IDF, a related term's
// capped at its query word's, related and expansion words' scaled by
// expansionWeight.
func (bq *bm25Query) idf(st *corpusStats) []float64 {
	idf := make([]float64, len(bq.q))
	for j := range bq.q {
		idf[j] = math.Log(1 + (st.n-float64(st.df[j])+0.5)/(float64(st.df[j])+0.5))
	}
	// A related term is worth expansionWeight of its own IDF, and never
	// more than that share of its query term's: a word common in the scope
	// is not outweighed by a rare neighbour.
	for j := range bq.q {
		if bq.src[j] >= 0 {
			idf[j] = min(idf[j], idf[bq.src[j]])
		}
	}
	for j := bq.own; j < len(bq.q); j++ {
		idf[j] *= expansionWeight
	}
	return idf
}

// termScore is BM25F's score of one file from its groups' frequencies in
// body and name and its lengths, with the share of the query's own words'
// IDF it has (cover).
func (bq *bm25Query) termScore(idf []float64, st *corpusStats, bodyTF, nameTF []float64, bodyLen, nameLen int) (score, cover float64) {
	normBody := 1 - bm25B + bm25B*float64(bodyLen)/st.avgBody
	normName := 1 - bm25B + bm25B*float64(nameLen)/st.avgName
	have, all := 0.0, 0.0
	for j := range bq.q {
		tf := bodyTF[j]/normBody + nameWeight*nameTF[j]/normName
		if j < bq.own {
			all += idf[j]
		}
		if tf > 0 {
			score += idf[j] * tf * (bm25K1 + 1) / (tf + bm25K1)
			if j < bq.own {
				have += idf[j]
			}
		}
	}
	return score, have / max(all, 1e-12)
}

// score scores cands by BM25F over two fields, the body and the
// scope-relative name without its extension, with st's statistics (from
// cands alone when st is nil).
func (bq *bm25Query) score(cache *analysisCache, sc *lexis.Scanner, prefix string, cands []candidate, st *corpusStats) []hit {
	q := bq.q
	found := make([][]uint32, len(bq.flat))
	docs := make([]doc, len(cands))
	pos := make([][]uint32, len(q)*len(cands))
	tfs := make([]float64, 2*len(q)*len(cands))
	df := make([]int, len(q))
	var sumBody, sumName float64
	for i, c := range cands {
		d := &docs[i]
		d.bodyTF, d.nameTF = tfs[2*i*len(q):(2*i+1)*len(q)], tfs[(2*i+1)*len(q):(2*i+2)*len(q)]
		if c.body != nil {
			// The term index's counts for this very content: the
			// positions are found only for a snippet shown (lazily).
			d.bodyLen = c.body.n
			copy(d.bodyTF, c.body.tf)
		} else {
			d.bodyLen = bq.positions(cache, sc, c, found, pos[i*len(q):(i+1)*len(q)], d.bodyTF)
			d.bodyPos = pos[i*len(q) : (i+1)*len(q)]
		}
		sc.Each(nameField(strings.TrimPrefix(c.path, prefix)), func(t string, _, _ int) {
			d.nameLen++
			if sl, ok := bq.slots[t]; ok {
				d.nameTF[sl.group] += sl.weight
			}
		})
		for j := range q {
			if d.bodyTF[j]+d.nameTF[j] > 0 {
				df[j]++
			}
		}
		sumBody += float64(d.bodyLen)
		sumName += float64(d.nameLen)
	}
	if st == nil {
		n := float64(len(cands))
		st = &corpusStats{n: n, df: df, avgBody: max(sumBody/n, 1), avgName: max(sumName/n, 1)}
	}
	idf := bq.idf(st)
	hits := []hit{}
	for i, c := range cands {
		d := &docs[i]
		score, cover := bq.termScore(idf, st, d.bodyTF, d.nameTF, d.bodyLen, d.nameLen)
		if score <= 0 {
			continue
		}
		content, bodyPos := c.content, d.bodyPos
		marks := func() []occurrence {
			if bodyPos == nil {
				sc := scanners.Get().(*lexis.Scanner)
				bodyPos = make([][]uint32, len(q))
				bq.positions(cache, sc, c, make([][]uint32, len(bq.flat)), bodyPos, make([]float64, len(q)))
				scanners.Put(sc)
			}
			return occurrences(bodyPos)
		}
		hits = append(hits, hit{
			c: c, rel: strings.TrimPrefix(c.path, prefix), score: math.Round(score*1e4) / 1e4, cover: cover,
			snippet: func(w int) (string, []Span) { return passage(content, marks(), idf, w) },
			marks:   marks,
		})
	}
	return hits
}

// positions analyses c's body (through cache) and fills pos[j] with the
// positions of query group j's terms (its variants' after its own) and
// tf[j] with their frequency (variants weighted); found is scratch, one
// slot per term of bq.flat. It returns the body's length in terms.
func (bq *bm25Query) positions(cache *analysisCache, sc *lexis.Scanner, c candidate, found, pos [][]uint32, tf []float64) int {
	body := cache.bodyOf(sc, c.path, c.content)
	body.lookupAll(bq.sorted, found)
	for j, g := range bq.q {
		pos[j] = found[bq.rank[bq.base[j]]]
		tf[j] = float64(len(pos[j]) / 2)
		for k := 1; k < len(g); k++ {
			if ps := found[bq.rank[bq.base[j]+k]]; len(ps) > 0 {
				pos[j] = append(slices.Clip(pos[j]), ps...)
				tf[j] += variantWeight * float64(len(ps)/2)
			}
		}
	}
	return body.n
}

// occurrences lists the query terms' positions (bodyPos[j]: term j's rune
// offset pairs) in the order of the body.
func occurrences(bodyPos [][]uint32) []occurrence {
	var occ []occurrence
	for j, ps := range bodyPos {
		for k := 0; k+1 < len(ps); k += 2 {
			occ = append(occ, occurrence{j, int(ps[k]), int(ps[k+1])})
		}
	}
	slices.SortFunc(occ, func(a, b occurrence) int { return cmp.Compare(a.start, b.start) })
	return occ
}

// nameField is the part of a file name that describes it: the name
// without its extension.
func nameField(rel string) string {
	if ext := path.Ext(rel); ext != rel {
		return strings.TrimSuffix(rel, ext)
	}
	return rel
}

// passage returns a window of width runes of content around the passage
// that holds the most query-term weight: the sum of the IDF of each
// distinct term in it, plus a tenth of that for each repeated occurrence.
// Without occurrences (a match by name only) it is the file's start. The
// spans are where the window shows the occurrences (every term scored:
// the query's words, their variants and related words).
func passage(content string, occ []occurrence, idf []float64, width int) (string, []Span) {
	if width <= 0 {
		return "", nil
	}
	runes := []rune(content)
	if len(runes) <= width || len(occ) == 0 {
		return window(runes, 0, width, occ)
	}
	count := make([]int, len(idf))
	best, bestI, bestJ := -1.0, 0, 0
	weight, j := 0.0, 0
	for i := range occ {
		// Extend the window [i, j) while it fits in width.
		for j < len(occ) && occ[j].end-occ[i].start <= width {
			t := occ[j].term
			if count[t] == 0 {
				weight += idf[t]
			} else {
				weight += idf[t] / 10
			}
			count[t]++
			j++
		}
		if j > i && weight > best {
			best, bestI, bestJ = weight, i, j
		}
		if j > i {
			t := occ[i].term
			count[t]--
			if count[t] == 0 {
				weight -= idf[t]
			} else {
				weight -= idf[t] / 10
			}
		} else {
			j = i + 1 // a single occurrence wider than the window
		}
	}
	first, last := occ[bestI].start, occ[max(bestJ-1, bestI)].end
	lead := max(0, width-(last-first)) / 3
	return window(runes, first-lead, width, occ)
}
