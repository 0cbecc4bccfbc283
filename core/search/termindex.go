// The term index: an inverted index of each searched folder's files (their
// terms, with frequencies in body and name, and lengths), kept by the
// store's change feed, so that a BM25 search reads the few files its terms
// rank best instead of every file of the scope.

package search

import (
	"context"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// Bounds of the term index.
const (
	// termIndexBudget bounds, in estimated bytes, the folder indexes one
	// Store keeps; past it the least recently searched folders are
	// dropped (and built again by their next search).
	termIndexBudget = 512 << 20
	// maxIndexedChars bounds the runes of a file the index reads: a longer
	// file is indexed by its first maxIndexedChars.
	maxIndexedChars = 1 << 20
	// buildBatch is how many files one read of an index build fetches.
	buildBatch = 256
	// extraCandidates is how many files past the request's Limit a search
	// over the index reads and scores from their content: the margin that
	// absorbs entries changed since they were indexed.
	extraCandidates = 8
	// maxTF bounds a term's frequency in one posting.
	maxTF = math.MaxUint16
	// reconcileEvery is how often, at most, a searched folder's index is
	// checked against the store in the background (every file read
	// again), for files changed behind its back, and reconcilePerFile what
	// each file adds to that wait: a folder of 100,000 files is read again
	// at most every 17 minutes.
	reconcileEvery   = time.Minute
	reconcilePerFile = 10 * time.Millisecond
)

// Fallback reasons: why a search scanned instead of answering from the
// term index ([Result.Fallback]).
const (
	// FallbackBuilding: the folder's index is being built (its first
	// search, or the first since the index was dropped).
	FallbackBuilding = "the search index of this folder is being built; files past max_files were not searched"
	// FallbackLiteral: literal mode counts substrings, which the index of
	// words cannot answer.
	FallbackLiteral = "literal search counts substrings and scans the folder"
)

// posting is one file's frequencies of one term: in its body and its name.
type posting struct {
	doc        int32
	body, name uint16
}

// tdoc is one indexed file: its path, a sum of the content indexed (so
// that any change is seen, even one that kept the version), its lengths.
type tdoc struct {
	path             string
	sum              uint64
	bodyLen, nameLen int32
	live             bool
}

// folderIndex is the term index of the files directly in one folder.
type folderIndex struct {
	folder string

	mu       sync.RWMutex
	ready    bool // built; until then searches scan
	docs     []tdoc
	ids      map[string]int32 // live doc of each path
	terms    map[string][]posting
	live     int
	dead     int // docs no longer live, still in postings
	sumBody  int64
	sumName  int64
	bytes    int64 // estimated size
	reported int64 // the size last added to termIndex.bytes

	// Set under the termIndex's lock: when fi was last searched (its
	// clock), and checked against the store.
	used     uint64
	checked  time.Time
	checking bool
	// listed is closed once the first search knows whether it builds fi
	// itself (inPlace, then built is closed when it is done) or in the
	// background.
	listed, built chan struct{}
	inPlace       bool
	// flushQueued: a flush of fi is scheduled (scheduleFlushLocked);
	// rechecking: its manifest is being read (recheckLocked); recheckAgain:
	// a recheck was asked for meanwhile, so the manifest read may predate
	// what the asker wants to see: it runs again when this one ends.
	flushQueued, rechecking, recheckAgain bool

	// The persisted index (termseg.go), under mu: the paths changed since
	// the last flush (with their change number), the segments fi holds
	// (in manifest order) and the manifest's version, when the manifest
	// was last read, and whether the next flush writes the index whole.
	dirty    map[string]uint64
	dirtySeq uint64
	segs     []segRef
	manifest string
	seen     time.Time
	needBase bool
	// sinceBase is the paths the segments after the base change.
	sinceBase map[string]bool
}

// termIndex is a Store's folder indexes and the feed that keeps them.
type termIndex struct {
	s *Engine

	mu      sync.Mutex
	folders map[string]*folderIndex
	pending map[string]map[string]uint64 // by folder: paths changed, not yet applied (with the change's seq)
	seq     uint64                       // numbers changes
	clock   uint64                       // bumped by each search (LRU)
	bytes   int64
	busy    int           // workers running (builds and the feed worker)
	feeding bool          // the feed worker runs
	idle    chan struct{} // closed when busy drops to 0
	bg      *background.Group
	ctx     context.Context // bg's: no request's
	closed  bool
	// waiting counts callers of wait, and hurry is closed (and replaced)
	// when one starts: scheduled flushes then run at once.
	waiting int
	hurry   chan struct{}
	// flushLock (a lock that waits under a context: lockFlush)
	// serializes the flushes and manifest reads of every folder, and
	// forget with them (so that no flush writes rows after forget erased
	// them).
	flushLock chan struct{}
	// recheck is manifestRecheck (tests shorten it).
	recheck time.Duration
}

func newTermIndex(s *Engine) *termIndex {
	bg := background.New()
	return &termIndex{s: s, folders: map[string]*folderIndex{}, pending: map[string]map[string]uint64{}, bg: bg, ctx: bg.Context(),
		hurry: make(chan struct{}), recheck: manifestRecheck, flushLock: make(chan struct{}, 1)}
}

// changed is the change feed's entry: the file at p changed (written,
// appended, deleted, restored). A folder with an index queues p; one
// without is built from scratch by its next search.
func (ti *termIndex) changed(p string) {
	folder := path.Dir(p) + "/"
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.closed || ti.folders[folder] == nil {
		return
	}
	if ti.pending[folder] == nil {
		ti.pending[folder] = map[string]uint64{}
	}
	ti.seq++
	ti.pending[folder][p] = ti.seq
	if !ti.feeding {
		ti.feeding = true
		ti.startLocked(ti.feed)
	}
}

// startLocked runs fn in the background, counted by busy (nothing once
// the store is closing). ti.mu is held.
func (ti *termIndex) startLocked(fn func()) {
	ti.busy++
	if !ti.bg.Go(func(context.Context) {
		defer ti.done()
		fn()
	}) {
		ti.busy--
	}
}

func (ti *termIndex) done() {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.busy--
	if ti.busy == 0 && ti.idle != nil {
		close(ti.idle)
		ti.idle = nil
	}
}

// feed applies queued changes, folder by folder, until none is left.
func (ti *termIndex) feed() {
	sc := lexis.NewScanner()
	for {
		ti.mu.Lock()
		var folder string
		var paths []string
		seq := ti.seq
		for f, ps := range ti.pending {
			if fi := ti.folders[f]; fi == nil || !fi.isReady() {
				continue // a build applies them when it ends
			}
			folder = f
			for p := range ps {
				paths = append(paths, p)
			}
			break
		}
		if folder == "" {
			ti.feeding = false
			ti.mu.Unlock()
			return
		}
		fi := ti.folders[folder]
		ti.mu.Unlock()
		err := ti.applyObserved(sc, fi, paths)
		if err != nil {
			if ti.ctx.Err() != nil {
				ti.mu.Lock()
				ti.feeding = false
				ti.mu.Unlock()
				return
			}
			ti.s.warn(ti.ctx, "updating the search index failed; the folder's index is dropped and built again by its next search", "", folder, err)
			ti.drop(fi)
			continue
		}
		// Applied: what changed again meanwhile stays queued. Until now
		// searches read the paths as pending, so none was missed.
		ti.mu.Lock()
		for _, p := range paths {
			if ps := ti.pending[folder]; ps != nil && ps[p] <= seq {
				delete(ps, p)
			}
		}
		if len(ti.pending[folder]) == 0 {
			delete(ti.pending, folder)
		}
		ti.mu.Unlock()
	}
}

// applyObserved is apply as the store's background operation [OpIndex],
// under the index's own context; with nil paths it reads the whole folder
// (readFolder) and removes the files indexed but no longer there.
func (ti *termIndex) applyObserved(sc *lexis.Scanner, fi *folderIndex, paths []string) (err error) {
	ctx, o := ti.s.observe(ti.ctx, opIndex)
	n := len(paths)
	defer func() { o.done(err, false, n) }()
	if paths != nil {
		return ti.apply(ctx, sc, fi, paths)
	}
	files, err := ti.readFolder(ctx, fi.folder, math.MaxInt)
	n = len(files)
	if err != nil {
		return err
	}
	ti.putFiles(sc, fi, files, true)
	return nil
}

// readFolder returns up to limit files directly in folder, each cut to
// maxIndexedChars: with the driver's scope read when it has one (a query
// that returns their contents), else a listing and batched reads.
func (ti *termIndex) readFolder(ctx context.Context, folder string, limit int) ([]driver.ScopeFile, error) {
	s := ti.s
	if s.scope != nil && rowpath.IsFolder(folder) {
		files, err := s.scope.ReadScope(ctx, driver.ScopeParams{Prefix: folder, Limit: limit, MaxChars: maxIndexedChars})
		if err != nil {
			return nil, err
		}
		now := s.now()
		return slices.DeleteFunc(files, func(f driver.ScopeFile) bool {
			return !rowpath.DirectlyUnder(f.Path, folder) || f.Lifetime.ExpiredAt(now)
		}), nil
	}
	paths, err := s.list(ctx, folder, limit, true)
	if err != nil {
		return nil, err
	}
	out := make([]driver.ScopeFile, 0, len(paths))
	for len(paths) > 0 {
		batch := paths[:min(len(paths), buildBatch)]
		paths = paths[len(batch):]
		rows, err := s.getFiles(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, p := range batch {
			if f := rows[p]; f != nil && !f.Tombstone {
				content, cut := driver.CutRunes(f.Content, maxIndexedChars)
				out = append(out, driver.ScopeFile{Path: p, Content: content, Truncated: cut, Version: f.Version})
			}
		}
	}
	return out, nil
}

// putFiles brings fi up to date with files, the folder's content; with
// whole, the files indexed but not among them are removed.
func (ti *termIndex) putFiles(sc *lexis.Scanner, fi *folderIndex, files []driver.ScopeFile, whole bool) {
	all := files
	for len(files) > 0 {
		batch := files[:min(len(files), buildBatch)]
		files = files[len(batch):]
		fi.mu.Lock()
		for _, f := range batch {
			fi.put(sc, f.Path, f.Content, true)
		}
		size := fi.bytes
		fi.mu.Unlock()
		ti.resized(fi, size)
	}
	defer ti.scheduleFlush(fi)
	if !whole {
		return
	}
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if len(fi.ids) == 0 {
		return
	}
	there := make(map[string]bool, len(fi.ids))
	for _, f := range all {
		there[f.Path] = true
	}
	for p := range fi.ids {
		if !there[p] {
			fi.put(sc, p, "", false) // gone from the folder
		}
	}
}

// apply reads paths and brings fi's entries for them up to date.
func (ti *termIndex) apply(ctx context.Context, sc *lexis.Scanner, fi *folderIndex, paths []string) error {
	slices.Sort(paths)
	for len(paths) > 0 {
		batch := paths[:min(len(paths), buildBatch)]
		paths = paths[len(batch):]
		rows, err := ti.s.getFiles(ctx, batch)
		if err != nil {
			return err
		}
		fi.mu.Lock()
		for _, p := range batch {
			f := rows[p]
			if f == nil || f.Tombstone {
				fi.put(sc, p, "", false)
			} else {
				content, _ := driver.CutRunes(f.Content, maxIndexedChars)
				fi.put(sc, p, content, true)
			}
		}
		size := fi.bytes
		fi.mu.Unlock()
		ti.resized(fi, size)
	}
	ti.scheduleFlush(fi)
	return nil
}

// drop forgets fi (if it is still folder's index).
func (ti *termIndex) drop(fi *folderIndex) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.folders[fi.folder] == fi {
		ti.bytes -= fi.reported
		delete(ti.folders, fi.folder)
		delete(ti.pending, fi.folder)
	}
}

// forget drops the indexes of every folder under prefix and takes the
// flush lock (once no flush or load is in flight, or ctx ends): the
// caller erases the persisted rows, then calls unlock, so that no flush
// or load interleaves with the erasure.
func (ti *termIndex) forget(ctx context.Context, prefix string) (unlock func(), err error) {
	ti.mu.Lock()
	for f, fi := range ti.folders {
		if strings.HasPrefix(f, prefix) {
			ti.bytes -= fi.reported
			delete(ti.folders, f)
			delete(ti.pending, f)
		}
	}
	ti.mu.Unlock()
	if err := ti.lockFlush(ctx); err != nil {
		return nil, err
	}
	return ti.unlockFlush, nil
}

// resized records fi's new size and drops the least recently searched
// folders while the indexes exceed their budget.
func (ti *termIndex) resized(fi *folderIndex, size int64) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.folders[fi.folder] != fi {
		return
	}
	ti.bytes += size - fi.recorded(size)
	for ti.bytes > termIndexBudget && len(ti.folders) > 1 {
		var oldest *folderIndex
		for _, f := range ti.folders {
			if f != fi && (oldest == nil || f.used < oldest.used) {
				oldest = f
			}
		}
		if oldest == nil {
			return
		}
		ti.bytes -= oldest.reported
		delete(ti.folders, oldest.folder)
		delete(ti.pending, oldest.folder)
	}
}

// wait returns once no build or change is in flight, or ctx is done.
func (ti *termIndex) wait(ctx context.Context) error {
	ti.mu.Lock()
	ti.waiting++
	close(ti.hurry)
	ti.hurry = make(chan struct{})
	ti.mu.Unlock()
	defer func() {
		ti.mu.Lock()
		ti.waiting--
		ti.mu.Unlock()
	}()
	for {
		ti.mu.Lock()
		if ti.busy == 0 {
			ti.mu.Unlock()
			return nil
		}
		if ti.idle == nil {
			ti.idle = make(chan struct{})
		}
		idle := ti.idle
		ti.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close stops the builds and the feed at once (the index is a cache: the
// next store's searches rebuild what they had not applied) and waits for
// them to see their context canceled.
func (ti *termIndex) close() {
	ti.mu.Lock()
	ti.closed = true
	ti.mu.Unlock()
	ti.bg.Close()
	ti.bg.Wait()
}
