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
	"github.com/agentmem/agentmem/core/internal/rowpath"
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
