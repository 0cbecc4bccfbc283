// The vector cache: the chunk vectors of a large indexed folder, in memory,
// so that a hybrid search picks the files closest in meaning from the whole
// folder without reading every index row.

package search

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

// folderVecs is one folder's chunk vectors, by file, for one model, packed
// so that a search reads them in one pass: each file's vectors lie end to
// end in data, at its slot's offset.
type folderVecs struct {
	folder, model string

	mu    sync.RWMutex
	ready bool
	slots []vecSlot
	at    map[string]int // path → its live slot
	data  []float32
	dead  int // floats of data no live slot holds
	dims  int
	bytes int64
}

// vecSlot is one file's place in folderVecs.data.
type vecSlot struct {
	path   string
	off, n int // n floats from off: n/dims vectors
	live   bool
}

// vecIndex is a Store's vector caches, one per large folder a hybrid search
// asked for, kept by the indexer's record writes.
type vecIndex struct {
	s *Engine

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
			fv = &folderVecs{folder: fi.folder, model: model, at: map[string]int{}}
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
	ctx, o := vi.s.observe(vi.s.terms.ctx, opIndex)
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
	fv.mu.Lock()
	before := fv.size()
	var n int
	for _, v := range ix {
		if len(v) == 0 || (fv.dims != 0 && len(v) != fv.dims) {
			continue // a known zero, or another length: never scored
		}
		fv.dims = len(v)
		n += len(v)
	}
	i, had := fv.at[p]
	switch {
	case had && fv.slots[i].n == n && n > 0: // same shape: in place
		off := fv.slots[i].off
		for _, v := range ix {
			if len(v) == fv.dims {
				off += copy(fv.data[off:], v)
			}
		}
	default:
		if had {
			fv.slots[i].live = false
			fv.dead += fv.slots[i].n
			delete(fv.at, p)
		}
		if n > 0 {
			fv.at[p] = len(fv.slots)
			fv.slots = append(fv.slots, vecSlot{path: p, off: len(fv.data), n: n, live: true})
			for _, v := range ix {
				if len(v) == fv.dims {
					fv.data = append(fv.data, v...)
				}
			}
		}
		if fv.dead > 1<<16 && fv.dead > len(fv.data)/2 {
			fv.compact()
		}
	}
	delta := fv.size() - before
	fv.bytes += delta
	fv.mu.Unlock()
	vi.mu.Lock()
	vi.bytes += delta
	vi.mu.Unlock()
}

// size estimates fv's bytes. fv.mu is held.
func (fv *folderVecs) size() int64 {
	return int64(4*cap(fv.data)) + int64(64*cap(fv.slots))
}

// compact drops the dead slots and the floats only they held. fv.mu is
// held.
func (fv *folderVecs) compact() {
	slots := make([]vecSlot, 0, len(fv.at))
	data := make([]float32, 0, len(fv.data)-fv.dead)
	for _, sl := range fv.slots {
		if sl.live {
			fv.at[sl.path] = len(slots)
			slots = append(slots, vecSlot{path: sl.path, off: len(data), n: sl.n, live: true})
			data = append(data, fv.data[sl.off:sl.off+sl.n]...)
		}
	}
	fv.slots, fv.data, fv.dead = slots, data, 0
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
// unit vector qv, best first: one pass over the packed vectors.
func (fv *folderVecs) top(qv []float32, prefix string, n int) []string {
	fv.mu.RLock()
	defer fv.mu.RUnlock()
	dims := fv.dims
	if len(qv) != dims || dims == 0 {
		return nil
	}
	type scored struct {
		slot int
		cos  float32
	}
	worse := func(a, b scored) bool {
		return a.cos < b.cos || (a.cos == b.cos && fv.slots[a.slot].path > fv.slots[b.slot].path)
	}
	best := make([]scored, 0, n+1) // sorted worst first
	whole := prefix == fv.folder
	for i := range fv.slots {
		sl := &fv.slots[i]
		if !sl.live || (!whole && !strings.HasPrefix(sl.path, prefix)) {
			continue
		}
		top := float32(-2)
		for off := sl.off; off+dims <= sl.off+sl.n; off += dims {
			v := fv.data[off : off+dims : off+dims]
			var d0, d1, d2, d3 float32
			k := 0
			for ; k+4 <= dims; k += 4 {
				d0 += v[k] * qv[k]
				d1 += v[k+1] * qv[k+1]
				d2 += v[k+2] * qv[k+2]
				d3 += v[k+3] * qv[k+3]
			}
			for ; k < dims; k++ {
				d0 += v[k] * qv[k]
			}
			top = max(top, d0+d1+d2+d3)
		}
		best = keepBest(best, scored{i, top}, n, func(a, b scored) bool { return worse(b, a) })
	}
	out := make([]string, len(best))
	for i := range best {
		out[i] = fv.slots[best[len(best)-1-i].slot].path
	}
	return out
}

// queryVector embeds query within ectx (the embedder's share of the search).
func (s *Engine) queryVector(ectx context.Context, query string) ([]float32, error) {
	return bounded(ectx, func(ctx context.Context) ([]float32, error) { return embedQuery(ctx, s.embedder, query) })
}
