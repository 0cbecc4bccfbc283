// Hybrid search: BM25 fused with the cosine of the query's vector and the
// vectors of the files' chunks.

package search

import (
	"context"
	"maps"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/rowpath"
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
	// vectorOnlyTop bounds the files a hybrid search returns on vectors
	// alone (sharing no query word, variant or related word): only the
	// best few by vector, and only those that stand out from the scope
	// (see [vectorFloor]).
	vectorOnlyTop = 3
	// vectorFloorZ is how far a file found by vectors alone must stand out
	// from the scope (see [vectorFloor]) to be a match while other files
	// share the query's words, and vectorAloneZ the same when no file
	// does (a question about something no note names, or a paraphrase);
	// a file between the two is returned as related, not as a match
	// (Result.Related), when nothing matched.
	// Chosen on e2e/internal/retrieval's sets with questions about things
	// no note mentions (docs/search.md has the figures): where words
	// matched, 1.0 loses no recall; where none did, averaged word vectors
	// put an unrelated note about as far above the rest as a paraphrased
	// one, and 4.0 answers "no match" to most such questions at the cost
	// of a few paraphrases.
	vectorFloorZ = 1.0
	vectorAloneZ = 4.0
	// queryEmbedShare is the share of a search's time left that embedding
	// its query (and expanding it) may take, and maxQueryEmbedWait the
	// most it waits without a deadline; past it the search answers from
	// BM25 alone.
	queryEmbedShare   = 0.5
	maxQueryEmbedWait = 5 * time.Second
)

// indexed is what the index holds for one file: its vectors by chunk hash
// ([zeroVec] for a chunk known to embed to zero).
type indexed map[string][]float32

// searchHybrid is Search in Hybrid mode: the candidates and their
// index records read concurrently, BM25 and vector rankings fused.
func (s *Engine) searchHybrid(ctx context.Context, r Request, terms []string) (found, error) {
	// The embedder gets its own share of the search's time: a slow or
	// hung one costs that share, and the search answers from BM25.
	ectx, cancel := context.WithTimeout(ctx, embedWait(ctx))
	defer cancel()
	extra, err := s.expandQuery(ectx, ctx, r.Query)
	if err != nil {
		return found{}, err
	}
	f, ok, fallback, small, err := s.searchHybridIndexed(ctx, ectx, r, terms, extra)
	if ok || err != nil {
		return f, err
	}
	model := s.embedder.Model()
	var recs map[string]indexed
	var rerr error
	var wg sync.WaitGroup
	scoped := s.scope != nil && rowpath.IsFolder(r.Prefix)
	if scoped {
		wg.Go(func() { recs, rerr = s.readIndexScope(ctx, r.Prefix, r.MaxFiles+1, model) })
	}
	cands, truncated, err := s.candidates(ctx, r)
	wg.Wait()
	if err != nil {
		return found{}, err
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
			return found{}, ctx.Err()
		}
		s.warn(ctx, "reading the search index failed; the search embeds what it can", "", r.Prefix, rerr)
		recs = nil
	}
	// A folder whose index is ready: the files it holds as read are
	// scored from its counts (their statistics still the candidates').
	var ix *lexIndex
	if small != nil {
		sc := scanners.Get().(*lexis.Scanner)
		if bq := newBM25Query(sc, r.Query, extra); bq != nil {
			ix = &lexIndex{bq: bq}
			for i, c := range cands {
				if !c.cut && r.MaxFileChars <= maxIndexedChars && small.indexedAs(c.path, c.content) {
					cands[i].body = small.bodyCounts(bq, c.path)
				}
			}
		}
		scanners.Put(sc)
	}
	f, err = s.rankHybrid(ctx, ectx, r, terms, cands, recs, extra, ix)
	if err != nil {
		return found{}, err
	}
	f.truncated = f.truncated || truncated
	f.fallback = fallback
	return f, nil
}

// expandQuery returns the words the embedder relates to the query (a
// [QueryExpander]'s), or none when it has no such words, fails or takes
// longer than ectx allows; an error only when the search's ctx is done.
func (s *Engine) expandQuery(ectx, ctx context.Context, query string) ([]string, error) {
	x, ok := s.embedder.(QueryExpander)
	if !ok {
		return nil, nil
	}
	words, err := bounded(ectx, func(ctx context.Context) ([]string, error) { return x.ExpandQuery(ctx, query) })
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return words, nil
}

// hybridCandidates is how many files the term index hands a hybrid
// search of a folder larger than its MaxFiles: BM25's best over the
// whole folder, which the vectors then rank with it.
const hybridCandidates = 200

// hybridCandidateTerms bounds the candidates of a hybrid search of a large
// folder by their length, in terms (each list, BM25's and the vectors',
// stops once its files hold that many; at least Limit+8 stay): 200 short
// notes fit, a handful of 64 KB history files do, so a search of long
// files reads and ranks a few megabytes at most, not 250 files of them.
const hybridCandidateTerms = 150_000

// lexIndex is what a hybrid search over the term index ranks its BM25
// side with: the analysed query and the folder's statistics.
type lexIndex struct {
	bq *bm25Query
	st *corpusStats
	qv []float32 // the query's vector, when embedded already
}

// searchHybridIndexed is a hybrid search of a folder larger than MaxFiles
// whose term index is ready: BM25 over the whole folder picks the
// candidates (hybridCandidates of them, and the files changed since they
// were indexed), which BM25 with the folder's statistics and the vectors
// then rank. ok is false when the folder is small enough to rank whole (or
// has no index yet: fallback then says so).
func (s *Engine) searchHybridIndexed(ctx, ectx context.Context, r Request, terms, extra []string) (f found, ok bool, fallback string, small *folderIndex, err error) {
	if s.terms == nil {
		return found{}, false, "", nil, nil
	}
	fi, fresh, err := s.terms.folder(ctx, r.Prefix[:strings.LastIndexByte(r.Prefix, '/')+1], r.MaxFiles)
	if err != nil {
		return found{}, false, "", nil, err
	}
	if fi == nil {
		return found{}, false, FallbackBuilding, nil, nil
	}
	if fi.size() <= r.MaxFiles {
		return found{}, false, "", fi, nil // every file is a candidate
	}
	sc := scanners.Get().(*lexis.Scanner)
	defer scanners.Put(sc)
	bq := newBM25Query(sc, r.Query, extra)
	if bq == nil {
		return found{}, false, "", nil, nil
	}
	// The files closest in meaning over the whole folder join BM25's, from
	// the folder's vector cache once it is built.
	var qv []float32
	var more []string
	if fv := s.vecs.folder(fi, s.embedder.Model()); fv == nil {
		fallback = FallbackVectors
	} else if qv, err = s.queryVector(ectx, r.Query); err == nil && qv != nil {
		more = fv.top(qv, r.Prefix, vectorCandidates)
	} else if ctx.Err() != nil {
		return found{}, false, "", nil, ctx.Err()
	}
	more = fi.capTerms(more, hybridCandidateTerms, r.Limit+extraCandidates)
	cands, st, covered, truncated, err := s.indexCandidates(ctx, fi, bq, r, hybridCandidates, fresh, more, hybridCandidateTerms)
	if err != nil {
		return found{}, false, "", nil, err
	}
	paths := make([]string, len(cands))
	for i, c := range cands {
		paths[i] = c.path
	}
	recs, rerr := s.readIndexPaths(ctx, paths, s.embedder.Model())
	if rerr != nil {
		if ctx.Err() != nil {
			return found{}, false, "", nil, ctx.Err()
		}
		s.warn(ctx, "reading the search index failed; the search embeds what it can", "", r.Prefix, rerr)
		recs = nil
	}
	f, err = s.rankHybrid(ctx, ectx, r, terms, cands, recs, extra, &lexIndex{bq, st, qv})
	if err != nil {
		return found{}, false, "", nil, err
	}
	f.scanned = covered
	f.truncated = f.truncated || truncated
	f.fallback = fallback
	return f, true, "", nil, nil
}

// readIndexScope reads the first parts of the index records in folder's
// index folder with the driver's scope read (and further parts by path).
func (s *Engine) readIndexScope(ctx context.Context, folder string, limit int, model string) (map[string]indexed, error) {
	files, err := s.scope.ReadScope(ctx, driver.ScopeParams{Prefix: indexFolder(folder), Limit: limit, MaxChars: maxRecordChars + 1})
	if err != nil {
		return nil, err
	}
	rows := make(map[string]string, len(files))
	for _, f := range files {
		if !f.Truncated && rowpath.DirectlyUnder(f.Path, indexFolder(folder)) {
			rows[folder+path.Base(f.Path)] = f.Content
		}
	}
	return s.decodeIndex(ctx, rows, model)
}

// readIndexPaths reads the first parts of the index records of paths.
func (s *Engine) readIndexPaths(ctx context.Context, paths []string, model string) (map[string]indexed, error) {
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
func (s *Engine) getRows(ctx context.Context, paths []string) (map[string]*driver.File, error) {
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
func (s *Engine) decodeIndex(ctx context.Context, rows map[string]string, model string) (map[string]indexed, error) {
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
