// Ranking a hybrid search: the vectors of the candidates, their fusion
// with the BM25 ranking, and the floors that keep weak vectors out.

package search

import (
	"cmp"
	"context"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

// fileVec is one candidate's vector score: its best chunk and that
// chunk's cosine with the query.
type fileVec struct {
	score float64
	best  chunk.Chunk
	ok    bool
}

// rankHybrid ranks cands by BM25 and by vectors and fuses the two. An
// embedder failure gives the BM25 ranking (and a warning).
//
// ectx bounds the embedder's calls; extra are the query expander's words;
// ix, when set, ranks the BM25 side with its query (the candidates the
// term index holds as read scored from its counts) and, when ix.st is
// set, the folder's statistics (cands were picked by the term index);
// else with cands' own.
func (s *Engine) rankHybrid(ctx, ectx context.Context, r Request, terms []string, cands []candidate, recs map[string]indexed, extra []string, ix *lexIndex) (found, error) {
	if len(cands) > r.MaxFiles {
		cands = cands[:r.MaxFiles] // rank cuts the same way, and says so
	}
	var lex []hit
	if ix != nil {
		sc := scanners.Get().(*lexis.Scanner)
		lex = ix.bq.score(&s.cache, sc, r.Prefix, cands, ix.st)
		scanners.Put(sc)
	} else {
		lex = bm25Expanded(&s.cache, r.Prefix, r.Query, extra, cands)
	}
	if lex == nil {
		lex = lexical(r.Prefix, terms, cands)
	}
	sortHits(lex)
	lexRank := make(map[string]int, len(lex))
	for i, h := range lex {
		lexRank[h.c.path] = i
	}
	var qv []float32
	if ix != nil {
		qv = ix.qv
	}
	vecs, err := bounded(ectx, func(ectx context.Context) ([]fileVec, error) {
		return s.vectorScores(ectx, ctx, r.Query, qv, cands, recs, lexRank)
	})
	if err != nil {
		if ctx.Err() != nil {
			return found{}, ctx.Err()
		}
		s.warn(ctx, "the embedder failed or took longer than its share of the search; the result is ranked by BM25 alone", "", r.Prefix, err)
		return found{hits: lex, scanned: len(cands)}, nil
	}
	order := make([]int, 0, len(cands))
	for i := range cands {
		if vecs[i].ok {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if vecs[a].score != vecs[b].score {
			return cmp.Compare(vecs[b].score, vecs[a].score)
		}
		return strings.Compare(cands[a].path, cands[b].path)
	})
	vecRank := make(map[string]int, len(order))
	for i, ci := range order {
		vecRank[cands[ci].path] = i
	}
	byPath := make(map[string]hit, len(lex))
	for _, h := range lex {
		byPath[h.c.path] = h
	}
	vw := vectorWeight(lex)
	near := vectorFloor(vecs, vectorFloorZ)
	floor := near
	if len(lex) == 0 {
		floor = vectorFloor(vecs, vectorAloneZ)
	}
	var hits, related []hit
	for i, c := range cands {
		lr, inLex := lexRank[c.path]
		vr, inVec := vecRank[c.path]
		if !inLex && (!inVec || vr >= vectorOnlyTop || vecs[i].score < near) {
			continue // no word of the query, and not close in meaning
		}
		if !inLex && vecs[i].score < floor {
			// Close in meaning to a question no file has a word of, but
			// not far enough above the rest to be called a match.
			best, content := vecs[i].best, c.content
			related = append(related, hit{c: c, rel: strings.TrimPrefix(c.path, r.Prefix),
				score: math.Round(vw/float64(rrfK+vr+1)*1e6) / 1e6, snippet: func(w int) (string, []Span) { return chunkWindow(content, best, w, nil) }})
			continue
		}
		score := 0.0
		if inLex {
			score += 1 / float64(lexRRFK+lr+1)
		}
		if inVec {
			score += vw / float64(rrfK+vr+1)
		}
		h := hit{c: c, rel: strings.TrimPrefix(c.path, r.Prefix), score: math.Round(score*1e6) / 1e6}
		if h.score <= 0 {
			continue // found by vectors alone while words decide (vw = 0)
		}
		best, content := vecs[i].best, c.content
		marks := byPath[c.path].marks // the BM25 terms the chunk shows
		chunkSnippet := func(w int) (string, []Span) { return chunkWindow(content, best, w, marks) }
		switch {
		case !inVec:
			h.snippet = byPath[c.path].snippet
		case !inLex || vr < lr:
			h.snippet = chunkSnippet // the best chunk beats the best BM25 passage
		default:
			h.snippet = byPath[c.path].snippet
		}
		hits = append(hits, h)
	}
	sortHits(hits)
	sortHits(related)
	return found{hits: hits, related: related, scanned: len(cands)}, nil
}

// vectorWeight is the weight of the vector ranking in a hybrid search's
// fusion, from the BM25 ranking lex (sorted): the share of the query's
// own words (by IDF) that its best file lacks. When that file has every
// word of the question, words decide and vectors only rank the files the
// words did not find; when it lacks some, vectors weigh in, in full when
// no word matched. Averaged word vectors are a weak signal beside a
// complete lexical match, and a strong one for a paraphrase.
func vectorWeight(lex []hit) float64 {
	if len(lex) == 0 {
		return 1
	}
	return 1 - min(max(lex[0].cover, 0), 1)
}

// vectorFloor is the cosine a file found by vectors alone must reach to
// stand z standard deviations out from the scope's background: the files
// below the best [vectorOnlyTop] by vector, their best-chunk cosines'
// mean and deviation (strictly above the mean of an even background). A
// scope too small for a background is measured against all of its files,
// and since none of n files can stand more than sqrt(n-1) deviations above
// their mean, the bar there is at most 0.8 of that: the best of a few notes
// by meaning can still reach it.
func vectorFloor(vecs []fileVec, z float64) float64 {
	var scores []float64
	for _, v := range vecs {
		if v.ok {
			scores = append(scores, v.score)
		}
	}
	if len(scores) == 0 || (z >= vectorAloneZ && len(scores) < 3) {
		// No file, or too few to tell one apart: by meaning alone, a file
		// of a folder of one or two is at most related.
		return math.Inf(1)
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) })
	bg, above := scores, 0.0
	if len(scores) >= vectorOnlyTop+2 {
		bg, above = scores[vectorOnlyTop:], math.Inf(1) // strictly above
	} else {
		z = min(z, 0.8*math.Sqrt(float64(len(scores)-1)))
	}
	var sum, sq float64
	for _, c := range bg {
		sum += c
		sq += c * c
	}
	n := float64(len(bg))
	mean := sum / n
	sd := math.Sqrt(max(sq/n-mean*mean, 0))
	if above > 0 {
		return math.Nextafter(mean+z*sd, above) // above an equal background
	}
	return mean + z*sd
}

// embedWait is how long a search may wait for its embedder: a share of
// the time its context leaves, at most maxQueryEmbedWait.
func embedWait(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return min(time.Duration(float64(time.Until(d))*queryEmbedShare), maxQueryEmbedWait)
	}
	return maxQueryEmbedWait
}

// bounded returns fn's result, or ctx's error as soon as ctx is done
// (fn then runs on and its result is dropped): an embedder that ignores
// its context cannot hold the search past its share.
func bounded[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// sortHits orders hits by score (desc), then path. Paths are distinct, so
// the order is total and an unstable sort gives the one result.
func sortHits(hits []hit) {
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(a.c.path, b.c.path)
	})
}

// chunkWindow returns a window of width runes of content around chunk c,
// with the spans of it that show marks' words (none when marks is nil).
func chunkWindow(content string, c chunk.Chunk, width int, marks func() []occurrence) (string, []Span) {
	if width <= 0 {
		return "", nil
	}
	runes := []rune(content)
	lead := max(0, width-(c.End-c.Start)) / 3
	var occ []occurrence
	if marks != nil {
		occ = marks()
	}
	return window(runes, c.Start-lead, width, occ)
}

// vectorScores scores each candidate by its best chunk's cosine with the
// query. A chunk whose hash has no vector of the model is embedded, at
// most MaxSearchEmbeds per search, the files ranked best by BM25 first;
// a file cut to MaxFileChars is scored with the vectors it has and left to
// the indexer. Files whose index lacked chunks are queued for indexing
// (with the vectors computed here).
//
// ctx bounds the embedder's calls; search is the search's own context,
// for what outlives them (the files queued for indexing).
func (s *Engine) vectorScores(ctx, search context.Context, query string, qv []float32, cands []candidate, recs map[string]indexed, lexRank map[string]int) ([]fileVec, error) {
	type ref struct{ file, chunk int }
	chunks := make([][]chunk.Chunk, len(cands))
	var missing []ref
	stale := make([]bool, len(cands))
	for i, c := range cands {
		chunks[i] = s.cache.chunksOf(c.path, c.content)
		ix := recs[c.path]
		runes := -1
		for j, ch := range chunks[i] {
			if _, ok := ix[ch.Hash]; ok {
				continue
			}
			stale[i] = true
			if c.cut {
				if runes < 0 {
					runes = utf8.RuneCountInString(c.content)
				}
				if ch.End >= runes-chunk.MaxRunes {
					continue // the cut end's chunks are not the file's
				}
			}
			missing = append(missing, ref{i, j})
		}
	}
	rankOf := func(i int) int {
		if r, ok := lexRank[cands[i].path]; ok {
			return r
		}
		return len(cands)
	}
	slices.SortStableFunc(missing, func(a, b ref) int { return cmp.Compare(rankOf(a.file), rankOf(b.file)) })
	missing = missing[:min(len(missing), MaxSearchEmbeds)]

	var computed [][]float32
	var err error
	texts := make([]string, len(missing))
	full := map[int][]chunk.Chunk{} // with their texts, for the files embedded here
	for k, m := range missing {
		if full[m.file] == nil {
			full[m.file] = chunk.Split(path.Base(cands[m.file].path), cands[m.file].content)
		}
		texts[k] = full[m.file][m.chunk].Text
	}
	if qv != nil { // embedded already
		computed, err = embedChecked(ctx, s.embedder, texts)
	} else if _, ok := s.embedder.(QueryEmbedder); ok || len(texts) == 0 {
		var qerr error
		var wg sync.WaitGroup
		if len(texts) > 0 {
			wg.Go(func() { computed, err = embedChecked(ctx, s.embedder, texts) })
		}
		qv, qerr = embedQuery(ctx, s.embedder, query)
		wg.Wait()
		if err == nil {
			err = qerr
		}
	} else {
		var all [][]float32
		all, err = embedChecked(ctx, s.embedder, append([]string{query}, texts...))
		if err == nil {
			qv, computed = all[0], all[1:]
		}
	}
	if err != nil {
		return nil, err
	}
	hints := map[int]map[string][]float32{} // by file: the vectors computed here
	for k, m := range missing {
		if computed[k] == nil {
			computed[k] = zeroVec // known zero: recorded, never scored
		}
		if hints[m.file] == nil {
			hints[m.file] = map[string][]float32{}
		}
		hints[m.file][chunks[m.file][m.chunk].Hash] = computed[k]
	}
	out := make([]fileVec, len(cands))
	for i, c := range cands {
		ix := recs[c.path]
		for _, ch := range chunks[i] {
			v := ix[ch.Hash]
			if v == nil {
				v = hints[i][ch.Hash]
			}
			if len(v) == 0 || len(v) != len(qv) {
				continue // none, a known zero, or another length: never scored
			}
			cos := 0.0
			for d := range v {
				cos += float64(v[d]) * float64(qv[d])
			}
			if !out[i].ok || cos > out[i].score {
				out[i] = fileVec{score: cos, best: ch, ok: true}
			}
		}
		if stale[i] {
			s.enqueueIndex(search, c.path, hints[i], 0)
		}
	}
	return out, nil
}
