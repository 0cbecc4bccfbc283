// The term index: an inverted index of each searched folder's files (their
// terms, with frequencies in body and name, and lengths), kept by the
// store's change feed, so that a BM25 search reads the few files its terms
// rank best instead of every file of the scope.

package search

import (
	"cmp"
	"context"
	"hash/fnv"
	"io"
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
	// rechecking: its manifest is being read (recheckLocked).
	flushQueued, rechecking bool

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
		return slices.DeleteFunc(files, func(f driver.ScopeFile) bool { return !rowpath.DirectlyUnder(f.Path, folder) }), nil
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
				out = append(out, driver.ScopeFile{Path: p, Content: content, Truncated: cut})
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

// folder returns folder's index, ready, or nil while it is built in the
// background. The first search of a folder builds its index: within the
// search when the folder holds at most maxFiles files (reading them costs
// what scanning them would), in the background otherwise (the search then
// scans). A ready index is checked against the store in the background
// at most every reconcileEvery, for changes made behind its back.
//
// fresh are the files an in-place build read, when this call built fi: a
// search may take their content as read now.
func (ti *termIndex) folder(ctx context.Context, folder string, maxFiles int) (_ *folderIndex, fresh []driver.ScopeFile, _ error) {
	ti.mu.Lock()
	ti.clock++
	fi := ti.folders[folder]
	if fi != nil {
		fi.used = ti.clock
		if fi.isReady() && !fi.checking && time.Since(fi.checked) > reconcileAfter(fi.size()) {
			fi.checking = true
			ti.startLocked(func() { ti.reconcile(fi) })
		}
		if fi.isReady() {
			ti.recheckLocked(fi)
			ti.scheduleFlushLocked(fi) // changes a failed flush left
		}
		ti.mu.Unlock()
		select {
		case <-fi.listed: // the creator knows whether it builds in place
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if fi.inPlace {
			select {
			case <-fi.built:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if fi.isReady() {
			return fi, nil, nil
		}
		return nil, nil, nil
	}
	if ti.closed {
		ti.mu.Unlock()
		return nil, nil, nil
	}
	fi = &folderIndex{folder: folder, ids: map[string]int32{}, terms: map[string][]posting{}, dirty: map[string]uint64{},
		listed: make(chan struct{}), built: make(chan struct{}), used: ti.clock, checked: time.Now()}
	ti.folders[folder] = fi
	ti.mu.Unlock()

	// What an earlier process persisted, when there is that. A folder of
	// at most maxFiles files is then read as a search would scan it, and
	// only what changed is analysed again; a larger one is listed, and the
	// paths added or removed since are read by the searches as changes.
	loaded, err := ti.loadPersisted(ctx, fi)
	var files []driver.ScopeFile
	if err == nil && loaded && fi.size() <= maxFiles {
		files, err = ti.readFolder(ctx, folder, maxFiles+1)
	}
	listed := err == nil && loaded && (files == nil || len(files) > maxFiles)
	if listed {
		err = ti.relist(ctx, fi)
	}
	if err != nil {
		close(fi.listed)
		ti.drop(fi)
		close(fi.built)
		return nil, nil, err
	}
	if listed {
		ti.ready(fi)
		close(fi.listed)
		close(fi.built)
		return fi, nil, nil
	}
	if !loaded {
		files, err = ti.readFolder(ctx, folder, maxFiles+1)
	}
	if err != nil || len(files) > maxFiles {
		close(fi.listed)
		ti.mu.Lock()
		if err == nil && !ti.closed && ti.folders[folder] == fi {
			ti.startLocked(func() { ti.build(fi) })
		}
		ti.mu.Unlock()
		if err != nil {
			ti.drop(fi)
			close(fi.built)
			return nil, nil, err
		}
		return nil, nil, nil
	}
	fi.inPlace = true
	close(fi.listed)
	defer close(fi.built)
	ti.putFiles(lexis.NewScanner(), fi, files, loaded)
	ti.ready(fi)
	return fi, files, nil
}

// build indexes every file directly in fi's folder in the background,
// then the changes made meanwhile.
func (ti *termIndex) build(fi *folderIndex) {
	defer close(fi.built)
	ctx := ti.ctx
	err := ti.applyObserved(lexis.NewScanner(), fi, nil)
	if err != nil {
		if ctx.Err() == nil {
			ti.s.warn(ctx, "building the search index failed; searches of the folder scan it until a later search builds it", "", fi.folder, err)
		}
		ti.drop(fi)
		return
	}
	ti.ready(fi)
}

// ready marks fi built, applies the changes queued meanwhile, and
// writes what the build indexed.
func (ti *termIndex) ready(fi *folderIndex) {
	fi.mu.Lock()
	fi.ready = true
	fi.mu.Unlock()
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if len(ti.pending[fi.folder]) > 0 && !ti.feeding && !ti.closed {
		ti.feeding = true
		ti.startLocked(ti.feed)
	}
	ti.scheduleFlushLocked(fi)
}

// scheduleFlush is scheduleFlushLocked, taking ti.mu.
func (ti *termIndex) scheduleFlush(fi *folderIndex) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.scheduleFlushLocked(fi)
}

// relist lists fi's folder and queues the paths fi lacks or holds in vain
// (files written or deleted by a process that crashed before it wrote
// them to the persisted index, or behind the store's back): searches read
// them as changes until the feed applies them.
func (ti *termIndex) relist(ctx context.Context, fi *folderIndex) error {
	paths, err := ti.s.list(ctx, fi.folder, math.MaxInt, true)
	if err != nil {
		return err
	}
	there := make(map[string]bool, len(paths))
	var changed []string
	fi.mu.RLock()
	for _, p := range paths {
		there[p] = true
		if _, ok := fi.ids[p]; !ok {
			changed = append(changed, p)
		}
	}
	for p := range fi.ids {
		if !there[p] {
			changed = append(changed, p)
		}
	}
	fi.mu.RUnlock()
	for _, p := range changed {
		ti.changed(p)
	}
	return nil
}

// reconcile reads every file of fi's folder again and brings the index up
// to date with what changed behind the store's back (another process, a
// hand edit in a file store): new files added, changed ones indexed again,
// vanished ones removed.
func (ti *termIndex) reconcile(fi *folderIndex) {
	defer func() {
		ti.mu.Lock()
		fi.checking, fi.checked = false, time.Now()
		ti.mu.Unlock()
	}()
	ctx := ti.ctx
	err := ti.applyObserved(lexis.NewScanner(), fi, nil)
	if err != nil && ctx.Err() == nil {
		ti.s.warn(ctx, "checking the search index against the store failed; a later search tries again", "", fi.folder, err)
	}
}

// size returns the number of files fi holds.
func (fi *folderIndex) size() int {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return fi.live
}

func (fi *folderIndex) isReady() bool {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return fi.ready
}

// recorded swaps the size last reported to the termIndex for size and
// returns the old one. Called with the termIndex's lock held.
func (fi *folderIndex) recorded(size int64) int64 {
	old := fi.reported
	fi.reported = size
	return old
}

// put brings p's entry up to date with its content (exists false: there is
// no file at p), and marks p for the next flush when that changed it.
// fi.mu is held.
func (fi *folderIndex) put(sc *lexis.Scanner, p, content string, exists bool) {
	sum := contentSum(content)
	id, ok := fi.ids[p]
	if ok && exists && fi.docs[id].sum == sum || !ok && !exists {
		return // indexed as it is
	}
	fi.remove(p)
	if exists {
		fi.add(sc, p, content, sum)
	}
	fi.dirtySeq++
	fi.dirty[p] = fi.dirtySeq
	fi.maybeCompact()
}

// remove takes p's doc out of the live ones (its postings stay until a
// compaction). fi.mu is held.
func (fi *folderIndex) remove(p string) {
	id, ok := fi.ids[p]
	if !ok {
		return
	}
	d := &fi.docs[id]
	d.live = false
	delete(fi.ids, p)
	fi.live--
	fi.dead++
	fi.sumBody -= int64(d.bodyLen)
	fi.sumName -= int64(d.nameLen)
}

// maybeCompact compacts fi once most of its docs are dead. fi.mu is held.
func (fi *folderIndex) maybeCompact() {
	if fi.dead > 64 && fi.dead > fi.live {
		fi.compact()
	}
}

// reset empties fi (to be loaded again). fi.mu is held.
func (fi *folderIndex) reset() {
	fi.docs, fi.ids, fi.terms = nil, map[string]int32{}, map[string][]posting{}
	fi.live, fi.dead, fi.sumBody, fi.sumName, fi.bytes = 0, 0, 0, 0, 0
}

// reconcileAfter is how long a folder of n files waits between checks.
func reconcileAfter(n int) time.Duration {
	return max(reconcileEvery, time.Duration(n)*reconcilePerFile)
}

// contentSum is the FNV-1a sum of content.
func contentSum(content string) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, content)
	return h.Sum64()
}

// add indexes f as a new doc, from its content. fi.mu is held.
func (fi *folderIndex) add(sc *lexis.Scanner, p, content string, sum uint64) {
	counts := map[string]*posting{}
	count := func(text string, field func(*posting) *uint16) int32 {
		n := int32(0)
		sc.Each(text, func(t string, _, _ int) {
			n++
			pt := counts[t]
			if pt == nil {
				pt = &posting{}
				counts[t] = pt
			}
			f := field(pt)
			*f = min(*f+1, maxTF)
		})
		return n
	}
	bodyLen := count(content, func(pt *posting) *uint16 { return &pt.body })
	nameLen := count(nameField(path.Base(p)), func(pt *posting) *uint16 { return &pt.name })
	fi.insert(p, sum, bodyLen, nameLen, func(yield func(t string, body, name uint16)) {
		for t, pt := range counts {
			yield(t, pt.body, pt.name)
		}
	})
}

// insert adds a live doc at p (which has none) with its lengths and the
// frequencies of its terms. fi.mu is held.
func (fi *folderIndex) insert(p string, sum uint64, bodyLen, nameLen int32, terms func(yield func(t string, body, name uint16))) {
	id := int32(len(fi.docs))
	n := 0
	terms(func(t string, body, name uint16) {
		n++
		ps, ok := fi.terms[t]
		if !ok {
			fi.bytes += int64(len(t)) + 64
		}
		fi.terms[t] = append(ps, posting{doc: id, body: body, name: name})
	})
	fi.addDoc(p, sum, bodyLen, nameLen, n)
}

// addDoc records a live doc at p (which has none) holding n distinct
// terms, whose postings the caller adds, and returns its id. fi.mu is
// held.
func (fi *folderIndex) addDoc(p string, sum uint64, bodyLen, nameLen int32, n int) int32 {
	id := int32(len(fi.docs))
	fi.docs = append(fi.docs, tdoc{path: p, sum: sum, bodyLen: bodyLen, nameLen: nameLen, live: true})
	fi.ids[p] = id
	fi.live++
	fi.sumBody += int64(bodyLen)
	fi.sumName += int64(nameLen)
	fi.bytes += int64(n)*8 + int64(len(p)) + 72
	return id
}

// compact rewrites the postings without the docs no longer live. fi.mu is
// held.
func (fi *folderIndex) compact() {
	remap := make([]int32, len(fi.docs))
	docs := make([]tdoc, 0, fi.live)
	for i, d := range fi.docs {
		remap[i] = -1
		if d.live {
			remap[i] = int32(len(docs))
			fi.ids[d.path] = remap[i]
			docs = append(docs, d)
		}
	}
	var bytes int64
	for t, ps := range fi.terms {
		out := ps[:0]
		for _, pt := range ps {
			if id := remap[pt.doc]; id >= 0 {
				pt.doc = id
				out = append(out, pt)
			}
		}
		if len(out) == 0 {
			delete(fi.terms, t)
			continue
		}
		fi.terms[t] = slices.Clip(out)
		bytes += int64(len(t)) + 64 + int64(len(out))*8
	}
	for _, d := range docs {
		bytes += int64(len(d.path)) + 72
	}
	fi.docs, fi.dead, fi.bytes = docs, 0, bytes
}

// capTerms returns the first of paths (best first) whose files hold at
// most maxTerms terms together, and at least keep of them.
func (fi *folderIndex) capTerms(paths []string, maxTerms, keep int) []string {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	total := 0
	for i, p := range paths {
		if id, ok := fi.ids[p]; ok {
			total += int(fi.docs[id].bodyLen)
		}
		if total > maxTerms && i >= keep {
			return paths[:i]
		}
	}
	return paths
}

// has reports whether fi holds a file at p.
func (fi *folderIndex) has(p string) bool {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	_, ok := fi.ids[p]
	return ok
}

// indexedAs reports whether fi has p indexed with this content (cut to
// maxIndexedChars).
func (fi *folderIndex) indexedAs(p, content string) bool {
	content, _ = driver.CutRunes(content, maxIndexedChars)
	sum := contentSum(content)
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	id, ok := fi.ids[p]
	return ok && fi.docs[id].sum == sum
}

// bodyCounts returns the length of p's body and the frequency in it of
// each of bq's groups of terms (variants weighted, as bm25Query.score
// counts them), from p's postings; nil when fi holds no p.
func (fi *folderIndex) bodyCounts(bq *bm25Query, p string) *indexedBody {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	id, ok := fi.ids[p]
	if !ok || fi.docs[id].bodyLen >= maxTF {
		return nil // a frequency may have been capped
	}
	out := &indexedBody{n: int(fi.docs[id].bodyLen), tf: make([]float64, len(bq.q))}
	for j, g := range bq.q {
		for v, t := range g {
			ps := fi.terms[t]
			// A term's postings are in doc order (ids only grow).
			i, found := slices.BinarySearchFunc(ps, id, func(pt posting, id int32) int { return cmp.Compare(pt.doc, id) })
			if !found || ps[i].body == 0 {
				continue
			}
			w := 1.0
			if v > 0 {
				w = variantWeight
			}
			out.tf[j] += w * float64(ps[i].body)
		}
	}
	return out
}

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
func (fi *folderIndex) top(bq *bm25Query, prefix string, k int) ([]string, *corpusStats, int) {
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
