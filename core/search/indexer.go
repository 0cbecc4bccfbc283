// The background indexer: after each change that lands, it re-embeds the
// file's changed chunks (Options.Embedder); WaitIndexed waits for it,
// Shutdown and Close drain it within a deadline.

package search

import (
	"context"
	"errors"
	"path"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/rowpath"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

// Bounds of the background indexer.
const (
	// maxIndexQueue bounds the paths waiting to be indexed; past it the
	// path's folder is marked, and once the queue has drained the worker
	// lists it (overflowPage paths at a time) and queues its files again:
	// a file whose record is current costs a read, not an embedding.
	maxIndexQueue = 4096
	overflowPage  = 256
	// embedBatch is the most texts one Embed call of the indexer carries.
	embedBatch = 64
	// maxIndexAttempts bounds the attempts at one path while its
	// embedding keeps failing; the next write or search queues it again.
	maxIndexAttempts = 5
	// maxHints bounds the vectors a search hands the indexer for one path.
	maxHints = 256
	// indexQuiet is how long the indexer lets a path rest after its last
	// change before indexing it, and indexMaxDelay the longest it waits
	// while the path keeps changing: a burst of writes to one file is
	// indexed once, and the indexer's own writes do not compete with the
	// burst's (a search meanwhile embeds what the index lacks).
	indexQuiet    = 20 * time.Millisecond
	indexMaxDelay = 500 * time.Millisecond
	// indexLinger is how long the worker, its queue empty, keeps looking
	// at it every indexQuiet before it sleeps until woken: a write within
	// that time queues its path without waking a goroutine (which costs
	// as much as a whole write on memstore).
	indexLinger = 5 * time.Second
)

// indexJob is one path waiting to be indexed, with the vectors a search
// already computed for some of its chunks (by chunk hash).
type indexJob struct {
	attempts    int
	hints       map[string][]float32
	first, last time.Time // when the path was queued, and changed last
	// origin is the context of the last call that queued the path: the
	// job's link to it (background.Origin), never its parent.
	origin context.Context
}

// indexer is a Store's background queue of paths to index. Its worker
// runs in bg, started by New and stopped by Shutdown or Close; it never
// runs under a request's context.
type indexer struct {
	bg      *background.Group
	mu      sync.Mutex
	queue   []string
	jobs    map[string]*indexJob
	running bool          // the worker holds a job
	hurry   int           // callers of WaitIndexed: index without resting
	parked  bool          // the worker sleeps until woken (see indexLinger)
	closed  bool          // Shutdown or Close began: nothing more is queued
	stopped bool          // the worker returned
	idle    chan struct{} // made by WaitIndexed, closed once nothing is queued or running
	wake    chan struct{}
	timers  map[*time.Timer]struct{}
	// overflow holds the folders a path was not queued for (the queue was
	// full), each with the path its listing resumes after and a mark
	// bumped each time the folder overflows again (its listing restarts).
	overflow map[string]overflowMark
	marks    uint64
	retry    time.Duration // first retry delay (doubles per attempt)
}

func newIndexer() *indexer {
	return &indexer{bg: background.New(), jobs: map[string]*indexJob{}, wake: make(chan struct{}, 1),
		timers: map[*time.Timer]struct{}{}, overflow: map[string]overflowMark{}, retry: time.Second}
}

// indexAfter queues p for indexing after a change that landed. It never
// blocks on the driver or the embedder.
func (s *Engine) indexAfter(ctx context.Context, p string) {
	if s.embedder == nil {
		return
	}
	s.enqueueIndex(ctx, p, nil, 0)
}

// enqueueIndex adds p to the queue (merging with a queued job of the same
// path). ctx, the caller's, becomes the job's link (see indexJob.origin).
func (s *Engine) enqueueIndex(ctx context.Context, p string, hints map[string][]float32, attempts int) {
	ix := s.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	now := time.Now()
	j := ix.jobs[p]
	if j == nil {
		if len(ix.jobs) >= maxIndexQueue {
			// Listed again from its start once the queue drains.
			folder := path.Dir(p) + "/"
			if folder == "./" {
				folder = "" // the root
			}
			ix.marks++
			ix.overflow[folder] = overflowMark{gen: ix.marks}
			return
		}
		j = &indexJob{attempts: attempts, first: now}
		ix.jobs[p] = j
		ix.queue = append(ix.queue, p)
	}
	j.last = now
	if ctx != nil {
		j.origin = ctx
	}
	for h, v := range hints {
		if j.hints == nil {
			j.hints = map[string][]float32{}
		}
		if len(j.hints) < maxHints {
			j.hints[h] = v
		}
	}
	if ix.parked {
		ix.parked = false
		select {
		case ix.wake <- struct{}{}:
		default:
		}
	}
}

// overflowMark is where an overflowed folder's listing resumes, and the
// mark that set it.
type overflowMark struct {
	after string
	gen   uint64
}

// requeueOverflow lists a page of one overflowed folder and queues its
// files (a listing error leaves the folder marked, for the next pass
// after a pause).
func (s *Engine) requeueOverflow(ctx context.Context) {
	ix := s.ix
	ix.mu.Lock()
	var folder string
	var mark overflowMark
	for folder, mark = range ix.overflow {
		break
	}
	after := mark.after
	ix.mu.Unlock()
	entries, err := s.d.ListFiles(ctx, driver.ListParams{Prefix: folder, After: after, Limit: overflowPage})
	if err != nil {
		if ctx.Err() == nil {
			s.warn(ctx, "listing a folder to index the files a full queue left out failed; it is listed again", "", folder, err)
			select {
			case <-time.After(ix.retry):
			case <-ctx.Done():
			}
		}
		return
	}
	var paths []string
	last := after
	for _, e := range entries {
		last = e.Path
		if _, reserved := rowpath.ReservedAt(e.Path); !reserved && !e.Tombstone && rowpath.DirectlyUnder(e.Path, folder) {
			paths = append(paths, e.Path)
		}
	}
	ix.mu.Lock()
	if ix.overflow[folder].gen == mark.gen { // not marked again meanwhile (then it restarts)
		if len(entries) < overflowPage {
			delete(ix.overflow, folder)
		} else {
			ix.overflow[folder] = overflowMark{after: last, gen: mark.gen}
		}
	}
	ix.mu.Unlock()
	for _, p := range paths {
		s.enqueueIndex(nil, p, nil, 0)
	}
}

// rest returns how long the job at the head of the queue should still
// wait (see indexQuiet), 0 when it is due. ix.mu is held.
func (ix *indexer) rest(j *indexJob, now time.Time) time.Duration {
	if ix.hurry > 0 || ix.closed {
		return 0
	}
	return max(0, min(j.last.Add(indexQuiet).Sub(now), j.first.Add(indexMaxDelay).Sub(now)))
}

// indexWorker indexes queued paths one at a time, in the order they were
// queued, each once it has rested (see indexQuiet), until Shutdown or
// Close: then it indexes what is queued without resting, and returns once
// the queue is empty or ctx (the group's) is canceled. Each job runs under
// a context of its own, linked to the call that queued it.
func (s *Engine) indexWorker(ctx context.Context) {
	ix := s.ix
	defer ix.stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var worked time.Time // parked until the first job
	for {
		ix.mu.Lock()
		for {
			var wait time.Duration
			if ctx.Err() != nil {
				ix.mu.Unlock()
				return
			}
			if len(ix.queue) == 0 && len(ix.overflow) > 0 && !ix.closed {
				ix.mu.Unlock()
				s.requeueOverflow(ctx)
				ix.mu.Lock()
				continue
			}
			if len(ix.queue) == 0 {
				if !ix.running && ix.idle != nil {
					close(ix.idle)
					ix.idle = nil
				}
				if ix.closed {
					ix.mu.Unlock()
					return
				}
				if time.Since(worked) >= indexLinger {
					ix.parked = true
					ix.mu.Unlock()
					select {
					case <-ix.wake:
					case <-ctx.Done():
					}
					ix.mu.Lock()
					ix.parked = false
					continue
				}
				wait = indexQuiet // linger: look again soon, unwoken
			} else if wait = ix.rest(ix.jobs[ix.queue[0]], time.Now()); wait <= 0 {
				break
			}
			ix.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-ix.wake:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
			ix.mu.Lock()
		}
		p := ix.queue[0]
		ix.queue = ix.queue[1:]
		j := ix.jobs[p]
		delete(ix.jobs, p)
		ix.running = true
		worked = time.Now()
		closing := ix.closed
		ix.mu.Unlock()

		s.indexJob(ix.bg.Link(j.origin), p, j, closing)
		ix.mu.Lock()
		ix.running = false
		ix.mu.Unlock()
	}
}

// indexJob indexes p, observed as an [OpIndex] operation, and schedules a
// retry of a failure (unless closing).
func (s *Engine) indexJob(ctx context.Context, p string, j *indexJob, closing bool) {
	ctx, o := s.observe(ctx, opIndex)
	err := s.indexPath(ctx, p, j.hints)
	if errors.Is(err, driver.ErrPrecondition) && j.attempts == 0 {
		// Another indexer (another process) wrote the record between our
		// read and our write: read it again, at once, once.
		err = s.indexPath(ctx, p, j.hints)
	}
	o.done(err, false, 0)
	if err != nil && ctx.Err() == nil {
		s.warn(ctx, "indexing a file for hybrid search failed; it stays findable by BM25 and is retried", "", p, err)
		if !closing && j.attempts+1 < maxIndexAttempts {
			s.retryIndex(j.origin, p, j.attempts+1)
		}
	}
}

// stop records that the worker returned and wakes the callers of
// WaitIndexed: nothing more is indexed.
func (ix *indexer) stop() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.stopped = true
	if ix.idle != nil {
		close(ix.idle)
		ix.idle = nil
	}
}

// retryIndex queues p again after a delay that doubles with each attempt;
// origin is the job's link.
func (s *Engine) retryIndex(origin context.Context, p string, attempts int) {
	ix := s.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(ix.retry<<(attempts-1), func() {
		ix.mu.Lock()
		delete(ix.timers, t)
		ix.mu.Unlock()
		s.enqueueIndex(origin, p, nil, attempts)
	})
	ix.timers[t] = struct{}{}
}

// WaitIndexed waits for the background work (see store.Store.WaitIndexed).
func (s *Engine) WaitIndexed(ctx context.Context) error {
	if s.terms != nil {
		if err := s.terms.wait(ctx); err != nil {
			return err
		}
	}
	if s.embedder == nil {
		return nil
	}
	s.ix.mu.Lock()
	s.ix.hurry++
	s.ix.mu.Unlock()
	select {
	case s.ix.wake <- struct{}{}:
	default:
	}
	defer func() {
		s.ix.mu.Lock()
		s.ix.hurry--
		s.ix.mu.Unlock()
	}()
	for {
		s.ix.mu.Lock()
		if len(s.ix.queue) == 0 && len(s.ix.overflow) == 0 && !s.ix.running || s.ix.stopped {
			s.ix.mu.Unlock()
			return nil
		}
		if s.ix.idle == nil {
			s.ix.idle = make(chan struct{})
		}
		idle := s.ix.idle
		s.ix.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stopIndexer drains the queue (without retries) until ctx is done (nil:
// until deadline), then cancels the job in flight; it returns once the
// worker has returned, with ctx's error if it had to cancel.
func (s *Engine) stopIndexer(ctx context.Context, deadline time.Time) error {
	ix := s.ix
	if ix == nil {
		return nil
	}
	if ctx == nil {
		// Close's bound, on the indexer's own context (canceled only once
		// the indexer stops): Close has no caller's context.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ix.bg.Context(), deadline)
		defer cancel()
	}
	ix.mu.Lock()
	ix.closed = true
	for t := range ix.timers {
		t.Stop()
	}
	select {
	case ix.wake <- struct{}{}:
	default:
	}
	ix.mu.Unlock()
	err := ix.bg.Shutdown(ctx)
	// The worker's driver calls see their context canceled and return, and
	// an embedder that ignores it is left behind (see embedDetached): no
	// driver call follows the driver's Close.
	ix.bg.Wait()
	return err
}

// indexRead is what indexing a path reads: the file, its index record
// (every part's chunks merged into old) and the record's rows as read, the
// conditions of the record's write.
type indexRead struct {
	f    *driver.File
	old  *record
	rows []*driver.File
}

// readIndex reads p's index record, then p. The record before the file: a
// record written by another indexer after this read was made from a file
// read after it, and our conditional write over the version read here
// then fails.
func (s *Engine) readIndex(ctx context.Context, p string) (*indexRead, error) {
	first, err := s.d.GetFile(ctx, indexPath(p, 1))
	if err != nil {
		return nil, err
	}
	f, err := s.d.GetFile(ctx, p)
	if err != nil {
		return nil, err
	}
	in := &indexRead{f: f}
	if first != nil && !first.Tombstone {
		in.rows = append(in.rows, first)
		if in.old = decodeRecord(first.Content); in.old != nil && in.old.Parts > 1 {
			for k := 2; k <= in.old.Parts; k++ {
				r, err := s.d.GetFile(ctx, indexPath(p, k))
				if err != nil {
					return nil, err
				}
				in.rows = append(in.rows, r)
				if r != nil && !r.Tombstone {
					if rec := decodeRecord(r.Content); rec != nil && rec.Model == in.old.Model && rec.Dims == in.old.Dims {
						in.old.Chunks = append(in.old.Chunks, rec.Chunks...)
					}
				}
			}
		}
	}
	return in, nil
}

// indexPath brings the index record of p up to date with the file: it
// erases the record of an absent file, and otherwise embeds the chunks
// whose hash the record lacks (none for an unchanged rewrite) and writes
// the record when its chunks changed.
func (s *Engine) indexPath(ctx context.Context, p string, hints map[string][]float32) error {
	in, err := s.readIndex(ctx, p)
	if err != nil {
		return err
	}
	return s.indexRecord(ctx, p, in, hints)
}

// indexRecord is indexPath over what readIndex read.
func (s *Engine) indexRecord(ctx context.Context, p string, in *indexRead, hints map[string][]float32) error {
	f, old, rows := in.f, in.old, in.rows
	if f == nil || f.Tombstone {
		return s.writeRecord(ctx, p, nil, rows)
	}
	model := s.embedder.Model()
	if old != nil && old.File == f.Version && old.Model == model {
		return nil
	}
	known := map[string][]float32{}
	dims := 0
	if old != nil && old.Model == model {
		dims = old.Dims
		for _, c := range old.Chunks {
			if c.zero() {
				known[c.Hash] = zeroVec
			} else if v := c.vector(old.Dims); v != nil {
				known[c.Hash] = v
			}
		}
	}
	chunks := chunk.Split(path.Base(p), f.Content)
	var missing []int
	for i, c := range chunks {
		if _, ok := known[c.Hash]; ok {
			continue
		}
		if v, ok := hints[c.Hash]; ok && len(v) == 0 {
			known[c.Hash] = zeroVec
			continue
		}
		if v, ok := hints[c.Hash]; ok && (dims == 0 || len(v) == dims) {
			known[c.Hash], dims = v, len(v)
			continue
		}
		missing = append(missing, i)
	}
	unchanged := old != nil && old.Model == model && len(missing) == 0 && len(old.Chunks) == len(chunks)
	if unchanged {
		for i, c := range chunks {
			if old.Chunks[i].Hash != c.Hash || old.Chunks[i].Start != c.Start || old.Chunks[i].End != c.End {
				unchanged = false
				break
			}
		}
	}
	if unchanged {
		return nil // an unchanged rewrite: nothing to embed, nothing to write
	}
	for len(missing) > 0 {
		batch := missing[:min(len(missing), embedBatch)]
		missing = missing[len(batch):]
		texts := make([]string, len(batch))
		for i, ci := range batch {
			texts[i] = chunks[ci].Text
		}
		vs, err := embedDetached(ctx, s.embedder, texts)
		if err != nil {
			return err
		}
		for i, ci := range batch {
			if len(vs[i]) == 0 {
				known[chunks[ci].Hash] = zeroVec // no known word: recorded, never scored
				continue
			}
			if dims != 0 && len(vs[i]) != dims {
				// The model's vectors changed length: start over (a known
				// zero stays zero).
				for h, v := range known {
					if len(v) != 0 {
						delete(known, h)
					}
				}
			}
			dims = len(vs[i])
			known[chunks[ci].Hash] = vs[i]
		}
	}
	rec := record{Format: 1, File: f.Version, Model: model, Dims: dims}
	for _, c := range chunks {
		v, ok := known[c.Hash]
		if ok && len(v) == 0 {
			rec.Chunks = append(rec.Chunks, recChunk{Hash: c.Hash, Start: c.Start, End: c.End}) // known zero
			continue
		}
		if !ok || len(v) != dims {
			continue
		}
		scale, q := quantize(v)
		rec.Chunks = append(rec.Chunks, recChunk{Hash: c.Hash, Start: c.Start, End: c.End, Scale: scale, Q: q})
	}
	return s.writeRecord(ctx, p, &rec, rows)
}

// embedDetached is embedChecked returning when ctx is done, even if the
// embedder does not: a Shutdown that gave up or a Close does not wait for an
// embedder that hangs (its call is left to end on its own).
func embedDetached(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	type answer struct {
		vs  [][]float32
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		vs, err := embedChecked(ctx, e, texts)
		ch <- answer{vs, err}
	}()
	select {
	case a := <-ch:
		return a.vs, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// writeRecord replaces the record parts rows (as read; nil entries are
// absent parts) with rec's parts, or erases them when rec is nil. Each row
// is one conditional primitive on its version.
func (s *Engine) writeRecord(ctx context.Context, p string, rec *record, rows []*driver.File) error {
	defer func() { s.vecs.recorded(p, rec) }() // a failed write leaves the cache as a read of the rows would
	var parts []string
	if rec != nil {
		var err error
		if parts, err = encodeRecord(*rec); err != nil {
			return err
		}
	}
	for k := 1; k <= max(len(parts), len(rows)); k++ {
		var row *driver.File
		if k <= len(rows) {
			row = rows[k-1]
		}
		if row != nil && row.Tombstone {
			row = nil
		}
		at := indexPath(p, k)
		switch {
		case k > len(parts):
			if row != nil {
				if err := s.d.DeleteFile(ctx, at, row.Version); err != nil && !errors.Is(err, driver.ErrPrecondition) {
					return err
				}
			}
		case row == nil:
			if err := s.d.CreateFile(ctx, driver.File{Path: at, Content: parts[k-1], Version: ulid.New(s.now())}); err != nil {
				return err
			}
		default:
			if row.Content == parts[k-1] {
				continue
			}
			if err := s.d.ReplaceFile(ctx, driver.File{Path: at, Content: parts[k-1], Version: ulid.New(s.now())}, row.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForgetIndex erases the index rows under prefix, a valid prefix the
// store has checked (see store.Store.ForgetIndex), and returns how many
// it removed.
func (s *Engine) ForgetIndex(ctx context.Context, prefix string) (n int, err error) {
	// The caches first, so that nothing writes rows again behind the
	// erasure (the term index holds the files' words too).
	s.vecs.forget(prefix)
	if s.terms != nil {
		unlock, err := s.terms.forget(ctx, prefix)
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	return s.eraseRows(ctx, prefix, func(p string) bool { return isIndexRow(p) || isTermRow(p) })
}

// deleteRow deletes the derived row at p at the version it has now; it
// reports false when there is none, or it was rewritten or removed
// meanwhile (another pass removes it).
func (s *Engine) deleteRow(ctx context.Context, p string) (bool, error) {
	f, err := s.d.GetFile(ctx, p)
	if err != nil || f == nil {
		return false, err
	}
	if err := s.d.DeleteFile(ctx, p, f.Version); err != nil {
		if errors.Is(err, driver.ErrPrecondition) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// eraseRows deletes the derived rows under prefix that match selects,
// and returns how many.
func (s *Engine) eraseRows(ctx context.Context, prefix string, match func(string) bool) (n int, err error) {
	after := ""
	for {
		entries, err := s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: pageSize})
		if err != nil {
			return n, err
		}
		for _, e := range entries {
			after = max(after, e.Path)
			if !match(e.Path) || e.Tombstone {
				continue
			}
			deleted, err := s.deleteRow(ctx, e.Path)
			if err != nil {
				return n, err
			}
			if deleted {
				n++
			}
		}
		if len(entries) < pageSize {
			return n, nil
		}
	}
}
