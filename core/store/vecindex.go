// The vector cache: the chunk vectors of a large indexed folder, in memory,
// so that a hybrid search picks the files closest in meaning from the whole
// folder without reading every index row.

package store

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// vectorCandidates is how many files, best by vector over the whole folder,
// a hybrid search of a large folder adds to its BM25 candidates.
const vectorCandidates = 50

// FallbackVectors: the folder's vector cache is being built; meanwhile the
// vectors of a hybrid search rank only the files its words found.
const FallbackVectors = "the vector index of this folder is being built; vectors ranked only the files found by words"

// folderVecs is one folder's chunk vectors, by file, for one model.
type folderVecs struct {
	folder, model string

	mu    sync.RWMutex
	ready bool
	files map[string][]float32 // path → its chunks' unit vectors, dims each, end to end
	dims  int
	bytes int64
}

// vecIndex is a Store's vector caches, one per large folder a hybrid search
// asked for, kept by the indexer's record writes.
type vecIndex struct {
	s *Store

	mu      sync.Mutex
	folders map[string]*folderVecs
	bytes   int64
}

// folder returns folder's vector cache for model when it is ready, or nil
// after starting its build in the background (from the index records of
// paths, the files fi holds).
func (vi *vecIndex) folder(fi *folderIndex, model string) *folderVecs {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	fv := vi.folders[fi.folder]
	if fv != nil && fv.model != model {
		vi.bytes -= fv.bytes
		fv = nil
	}
	if fv == nil {
		ti := vi.s.terms
		ti.mu.Lock()
		closed := ti.closed
		if !closed {
			fv = &folderVecs{folder: fi.folder, model: model, files: map[string][]float32{}}
			vi.folders[fi.folder] = fv
			ti.startLocked(func() { vi.build(fv, fi) })
		}
		ti.mu.Unlock()
		return nil
	}
	fv.mu.RLock()
	defer fv.mu.RUnlock()
	if !fv.ready {
		return nil
	}
	return fv
}

// build reads the index records of fi's files into fv.
func (vi *vecIndex) build(fv *folderVecs, fi *folderIndex) {
	ctx, o := vi.s.observe(vi.s.terms.ctx, OperationInfo{Op: OpIndex})
	fi.mu.RLock()
	paths := make([]string, 0, len(fi.ids))
	for p := range fi.ids {
		paths = append(paths, p)
	}
	fi.mu.RUnlock()
	slices.Sort(paths)
	var err error
	defer func() { o.done(err, false, len(paths)) }()
	for len(paths) > 0 {
		batch := paths[:min(len(paths), buildBatch)]
		paths = paths[len(batch):]
		var recs map[string]indexed
		if recs, err = vi.s.readIndexPaths(ctx, batch, fv.model); err != nil {
			break
		}
		for _, p := range batch {
			if ix, ok := recs[p]; ok {
				vi.put(fv, p, ix)
			}
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			vi.s.warn(ctx, "building the vector cache failed; hybrid searches of the folder rank the files found by words until a later search builds it", "", fv.folder, err)
		}
		vi.mu.Lock()
		if vi.folders[fv.folder] == fv {
			delete(vi.folders, fv.folder)
			vi.bytes -= fv.bytes
		}
		vi.mu.Unlock()
		return
	}
	fv.mu.Lock()
	fv.ready = true
	fv.mu.Unlock()
}

// put sets p's vectors in fv (none: p is removed).
func (vi *vecIndex) put(fv *folderVecs, p string, ix indexed) {
	var flat []float32
	fv.mu.Lock()
	for _, v := range ix {
		if len(v) == 0 || (fv.dims != 0 && len(v) != fv.dims) {
			continue // a known zero, or another length: never scored
		}
		fv.dims = len(v)
		flat = append(flat, v...)
	}
	old, had := fv.files[p]
	delta := int64(4*len(flat)) - int64(4*len(old))
	switch {
	case len(flat) == 0 && had:
		delete(fv.files, p)
		delta -= int64(len(p)) + 48
	case len(flat) > 0:
		if !had {
			delta += int64(len(p)) + 48
		}
		fv.files[p] = flat
	}
	fv.bytes += delta
	fv.mu.Unlock()
	vi.mu.Lock()
	vi.bytes += delta
	vi.mu.Unlock()
}

// recorded updates the cache of p's folder after the indexer wrote p's
// record (rec nil: erased).
func (vi *vecIndex) recorded(p string, rec *record) {
	if vi == nil {
		return
	}
	folder := p[:strings.LastIndexByte(p, '/')+1]
	vi.mu.Lock()
	fv := vi.folders[folder]
	vi.mu.Unlock()
	if fv == nil || (rec != nil && rec.Model != fv.model) {
		return
	}
	ix := indexed{}
	if rec != nil {
		rec.add(ix)
	}
	vi.put(fv, p, ix)
}

// forget drops the caches of every folder under prefix.
func (vi *vecIndex) forget(prefix string) {
	if vi == nil {
		return
	}
	vi.mu.Lock()
	defer vi.mu.Unlock()
	for f, fv := range vi.folders {
		if strings.HasPrefix(f, prefix) {
			vi.bytes -= fv.bytes
			delete(vi.folders, f)
		}
	}
}

// top returns the n files under prefix whose best chunk is closest to the
// unit vector qv, best first.
func (fv *folderVecs) top(qv []float32, prefix string, n int) []string {
	fv.mu.RLock()
	defer fv.mu.RUnlock()
	if len(qv) != fv.dims {
		return nil
	}
	type scored struct {
		path string
		cos  float32
	}
	best := make([]scored, 0, n+1) // sorted worst first
	for p, flat := range fv.files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		top := float32(-2)
		for i := 0; i+fv.dims <= len(flat); i += fv.dims {
			v := flat[i : i+fv.dims : i+fv.dims]
			var dot float32
			for d, x := range v {
				dot += x * qv[d]
			}
			top = max(top, dot)
		}
		if len(best) == n && (top < best[0].cos || (top == best[0].cos && p > best[0].path)) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, scored{p, top}, func(a, b scored) int {
			if a.cos < b.cos || (a.cos == b.cos && a.path > b.path) {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, i, scored{p, top})
		if len(best) > n {
			best = best[1:]
		}
	}
	out := make([]string, len(best))
	for i := range best {
		out[i] = best[len(best)-1-i].path
	}
	return out
}

// queryVector embeds query within ectx (the embedder's share of the search).
func (s *Store) queryVector(ectx context.Context, query string) ([]float32, error) {
	return bounded(ectx, func(ctx context.Context) ([]float32, error) { return embedQuery(ctx, s.embedder, query) })
}
