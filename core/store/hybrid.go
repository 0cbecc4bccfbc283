// Hybrid search: BM25 fused with the cosine of the query's vector and the
// vectors of the files' chunks.

package store

import (
	"cmp"
	"context"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
)

// Hybrid search parameters.
const (
	// MaxSearchEmbeds bounds the chunks one hybrid search embeds itself
	// (those the index lacks: files changed behind the store's back, or
	// not indexed yet), in one Embed call; the indexer does the rest in the
	// background.
	MaxSearchEmbeds = 64
	// rrfK is reciprocal rank fusion's constant for the vector ranking,
	// and lexRRFK the BM25 ranking's: smaller, so that BM25's first ranks
	// weigh more. Chosen on e2e/internal/retrieval's notes and conversation sets
	// (dev.json only as a check): k = 60 for both lost BM25's lead on long
	// conversations; 10, 20 and 30 for BM25 all kept it, and 30 ranked the
	// right note first more often on short notes (recall@1 0.783 against
	// 0.733 for 10). Weighted RRF (BM25 ×1.5–3) and a min-max-normalised
	// convex combination (α 0.2–0.7) did no better on both sets at once.
	// The vector ranking is weighted by [vectorWeight].
	rrfK    = 60
	lexRRFK = 30
	// indexReaders bounds concurrent index reads on a driver without
	// batched reads.
	indexReaders = 8
)

// indexed is what the index holds for one file: its vectors by chunk hash
// ([zeroVec] for a chunk known to embed to zero).
type indexed map[string][]float32

// searchHybrid is Search in SearchHybrid mode: the candidates and their
// index records read concurrently, BM25 and vector rankings fused.
func (s *Store) searchHybrid(ctx context.Context, r SearchRequest, terms []string) (SearchResult, error) {
	model := s.embedder.Model()
	var recs map[string]indexed
	var rerr error
	var wg sync.WaitGroup
	scoped := s.scope != nil && isFolder(r.Prefix)
	if scoped {
		wg.Go(func() { recs, rerr = s.readIndexScope(ctx, r.Prefix, r.MaxFiles+1, model) })
	}
	cands, truncated, err := s.candidates(ctx, r)
	wg.Wait()
	if err != nil {
		return SearchResult{}, err
	}
	if !scoped {
		paths := make([]string, len(cands))
		for i, c := range cands {
			paths[i] = c.path
		}
		recs, rerr = s.readIndexPaths(ctx, paths, model)
	}
	if rerr != nil {
		if ctx.Err() != nil {
			return SearchResult{}, ctx.Err()
		}
		s.warn(ctx, "reading the search index failed; the search embeds what it can", "", r.Prefix, rerr)
		recs = nil
	}
	res, err := s.rankHybrid(ctx, r, terms, cands, recs)
	if err != nil {
		return SearchResult{}, err
	}
	res.Truncated = res.Truncated || truncated
	return res, nil
}

// readIndexScope reads the first parts of the index records in folder's
// index folder with the driver's scope read (and further parts by path).
func (s *Store) readIndexScope(ctx context.Context, folder string, limit int, model string) (map[string]indexed, error) {
	files, err := s.scope.ReadScope(ctx, driver.ScopeParams{Prefix: indexFolder(folder), Limit: limit, MaxChars: maxRecordChars + 1})
	if err != nil {
		return nil, err
	}
	rows := make(map[string]string, len(files))
	for _, f := range files {
		if !f.Truncated && directlyUnder(f.Path, indexFolder(folder)) {
			rows[folder+path.Base(f.Path)] = f.Content
		}
	}
	return s.decodeIndex(ctx, rows, model)
}

// readIndexPaths reads the first parts of the index records of paths.
func (s *Store) readIndexPaths(ctx context.Context, paths []string, model string) (map[string]indexed, error) {
	at := make([]string, len(paths))
	for i, p := range paths {
		at[i] = indexPath(p, 1)
	}
	got, err := s.getRows(ctx, at)
	if err != nil {
		return nil, err
	}
	rows := make(map[string]string, len(got))
	for i, p := range paths {
		if f := got[at[i]]; f != nil && !f.Tombstone {
			rows[p] = f.Content
		}
	}
	return s.decodeIndex(ctx, rows, model)
}

// getRows reads paths with the driver's batched read, or with a few
// concurrent single reads.
func (s *Store) getRows(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	if s.batch != nil || len(paths) <= 1 {
		return s.getFiles(ctx, paths)
	}
	out := make(map[string]*driver.File, len(paths))
	var mu sync.Mutex
	var first error
	next := make(chan string)
	var wg sync.WaitGroup
	for range min(indexReaders, len(paths)) {
		wg.Go(func() {
			for p := range next {
				f, err := s.d.GetFile(ctx, p)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				out[p] = f
				mu.Unlock()
			}
		})
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return out, first
}

// decodeIndex turns first parts (by file path) into vectors of model,
// reading the further parts of long records. Rows are decoded once per
// content (see [analysisCache]); the maps returned may be shared with the
// cache and are never modified.
func (s *Store) decodeIndex(ctx context.Context, rows map[string]string, model string) (map[string]indexed, error) {
	out := make(map[string]indexed, len(rows))
	var more []string
	owner := map[string]string{}
	for p, content := range rows {
		d := s.cache.rowOf(indexPath(p, 1), content)
		if d == nil || d.model != model {
			continue // malformed, or another model's: never scored
		}
		if d.parts <= 1 {
			out[p] = d.vecs
			continue
		}
		out[p] = maps.Clone(d.vecs)
		for k := 2; k <= d.parts; k++ {
			at := indexPath(p, k)
			more = append(more, at)
			owner[at] = p
		}
	}
	if len(more) > 0 {
		got, err := s.getRows(ctx, more)
		if err != nil {
			return nil, err
		}
		for at, f := range got {
			if f == nil || f.Tombstone {
				continue
			}
			if d := s.cache.rowOf(at, f.Content); d != nil && d.model == model {
				maps.Copy(out[owner[at]], d.vecs)
			}
		}
	}
	return out, nil
}

// add puts the record's well-formed vectors into ix (a known zero one as
// [zeroVec]) and returns it.
func (r *record) add(ix indexed) indexed {
	for _, c := range r.Chunks {
		if c.zero() {
			ix[c.Hash] = zeroVec
		} else if v := c.vector(r.Dims); v != nil {
			ix[c.Hash] = v
		}
	}
	return ix
}

// fileVec is one candidate's vector score: its best chunk and that
// chunk's cosine with the query.
type fileVec struct {
	score float64
	best  chunk.Chunk
	ok    bool
}

// rankHybrid ranks cands by BM25 and by vectors and fuses the two. An
// embedder failure gives the BM25 ranking (and a warning).
func (s *Store) rankHybrid(ctx context.Context, r SearchRequest, terms []string, cands []candidate, recs map[string]indexed) (SearchResult, error) {
	bmReq := r
	bmReq.Mode = SearchBM25
	if len(cands) > r.MaxFiles {
		cands = cands[:r.MaxFiles] // rank cuts the same way, and says so
	}
	var extra []string
	if x, ok := s.embedder.(QueryExpander); ok {
		if words, err := x.ExpandQuery(ctx, r.Query); err == nil {
			extra = words
		} else if ctx.Err() != nil {
			return SearchResult{}, ctx.Err()
		}
	}
	lex := bm25Expanded(&s.cache, r.Prefix, r.Query, extra, cands)
	if lex == nil {
		lex = lexical(r.Prefix, terms, cands)
	}
	sortHits(lex)
	lexRank := make(map[string]int, len(lex))
	for i, h := range lex {
		lexRank[h.c.path] = i
	}
	vecs, err := s.vectorScores(ctx, r.Query, cands, recs, lexRank)
	if err != nil {
		if ctx.Err() != nil {
			return SearchResult{}, ctx.Err()
		}
		s.warn(ctx, "the embedder failed during a hybrid search; the result is ranked by BM25 alone", "", r.Prefix, err)
		return rank(&s.cache, bmReq, terms, cands), nil
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
	var hits []hit
	for i, c := range cands {
		lr, inLex := lexRank[c.path]
		vr, inVec := vecRank[c.path]
		if !inLex && !inVec {
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
		best, content := vecs[i].best, c.content
		chunkSnippet := func(w int) string { return chunkWindow(content, best, w) }
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
	res := SearchResult{Scanned: len(cands)}
	var cut bool
	res.Matches, cut = shape(hits, r.Limit, r.MaxChars)
	res.Truncated = cut
	return res, nil
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

// chunkWindow returns a window of width runes of content around chunk c.
func chunkWindow(content string, c chunk.Chunk, width int) string {
	if width <= 0 {
		return ""
	}
	runes := []rune(content)
	lead := max(0, width-(c.End-c.Start)) / 3
	return window(runes, c.Start-lead, width)
}

// vectorScores scores each candidate by its best chunk's cosine with the
// query. A chunk whose hash has no vector of the model is embedded, at
// most MaxSearchEmbeds per search, the files ranked best by BM25 first;
// a file cut to MaxFileChars is scored with the vectors it has and left to
// the indexer. Files whose index lacked chunks are queued for indexing
// (with the vectors computed here).
func (s *Store) vectorScores(ctx context.Context, query string, cands []candidate, recs map[string]indexed, lexRank map[string]int) ([]fileVec, error) {
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

	var qv []float32
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
	if _, ok := s.embedder.(QueryEmbedder); ok || len(texts) == 0 {
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
			s.enqueueIndex(ctx, c.path, hints[i], 0)
		}
	}
	return out, nil
}
