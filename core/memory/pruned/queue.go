package pruned

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [QueueOptions].
const DefaultQueueSize = 256

// ErrQueueClosed reports an [AppendQueue.Add] after [AppendQueue.Close]:
// create a new queue (or a new adapter value) for further work.
var ErrQueueClosed = errors.New("pruned: the append queue is closed; create a new one for further work")

// QueueOptions configures an [AppendQueue]. Nil means defaults.
type QueueOptions struct {
	// Size bounds the appends waiting in the queue; Add waits for room
	// (or its context) when it is full. Default 256.
	Size int
	// OnError, when set, receives every failed append with its full
	// detail, in both error modes. It runs on the queue's goroutine: it
	// must not wait for the queue (Add, Flush, Close).
	OnError func(ctx context.Context, err error)
	// Rotate, when non-nil, makes every append rotate
	// ([AppendSeries]): a full file never fails an append, the
	// series' next file takes it. The queue remembers each series' newest
	// file, so an append costs no listing of the series except when it
	// crosses a boundary (and once per series after the queue starts). A
	// failure of Rotate's retention (an error wrapping [ErrRetention]) is
	// reported like a failed append, but the text landed and is not
	// appended again.
	Rotate *RotateOptions
}

// AppendQueue runs [memory.Append] in the background, in the order of [AppendQueue.Add],
// each operation id at most once, for hooks that must not wait for the
// store (such as an adapter's pruned-history window). Failures follow the
// notebook's [memory.Options.InjectionErrors]: in [memory.IgnoreErrors] mode they are
// logged at Warn ([memory.Options.Logger]); in [memory.RaiseErrors] mode the first one is
// kept for [AppendQueue.Err], [AppendQueue.Flush] or [AppendQueue.Close].
// Either way the operation is forgotten, so adding it again retries it
// (except after a rotating append that landed and only its retention
// failed, see [QueueOptions.Rotate]).
//
// One goroutine drains the queue while it holds work and ends when it is
// empty, so an idle queue holds no goroutine. Appends run with the values
// of the context given to Add but not its cancellation or deadline: under
// the queue's own context ([background.Group.Detach]), which only
// [AppendQueue.Close] cancels, and whose spans a tracer makes a trace of
// their own, linked to Add's. It is safe for concurrent use.
type AppendQueue struct {
	bg     *background.Group
	mem    *memory.Memory
	onErr  func(context.Context, error)
	rotate *RotateOptions
	queue  chan queued
	newest map[string]int // series path → its newest file, when rotating (the worker's alone)

	adding sync.WaitGroup // adds let in and not yet queued (counted under mu while !closed)

	mu      sync.Mutex
	running bool
	closed  bool
	seen    map[string]bool // operation id → true once appended, false while queued
	err     error           // the first failure in RaiseErrors mode, not yet returned
}

// queued is one append, or a flush barrier.
type queued struct {
	ctx     context.Context
	path    string
	text    string
	op      string
	barrier chan struct{}
}

// maxSeen bounds the in-memory record of operations done; past it the
// record starts over and the store's receipts answer instead.
const maxSeen = 100_000

// NewAppendQueue returns a queue that appends through m's store, under m's
// error mode and logger. A nil m is an error wrapping
// store.ErrNilArgument.
func NewAppendQueue(m *memory.Memory, opts *QueueOptions) (*AppendQueue, error) {
	if m == nil {
		return nil, fmt.Errorf("pruned: pass NewAppendQueue a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	var o QueueOptions
	if opts != nil {
		o = *opts
	}
	if o.Size <= 0 {
		o.Size = DefaultQueueSize
	}
	q := &AppendQueue{bg: background.New(), mem: m, onErr: o.OnError, queue: make(chan queued, o.Size), seen: map[string]bool{}}
	if o.Rotate != nil {
		r := *o.Rotate
		r.Metadata = maps.Clone(r.Metadata)
		q.rotate, q.newest = &r, map[string]int{}
	}
	return q, nil
}

// Add queues text for the file at path (a full store path) under the
// operation id op (required: it makes the append exactly once, see
// [memory.AppendOptions.OperationID]). An op already appended or waiting is
// skipped, and so, after a restart, is one the store has a receipt for.
// It waits for room while the queue is full. Errors: [ErrQueueClosed],
// [memory.ErrMissingID] for an empty op, the context's error.
func (q *AppendQueue) Add(ctx context.Context, path, text, op string) error {
	if op == "" {
		return memory.ErrMissingID
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrQueueClosed
	}
	if _, known := q.seen[op]; known {
		q.mu.Unlock()
		return nil
	}
	if len(q.seen) >= maxSeen {
		clear(q.seen)
	}
	q.seen[op] = false
	q.adding.Add(1) // let in: Close waits until it is queued
	q.mu.Unlock()
	defer q.adding.Done()
	if admitted != nil {
		admitted()
	}
	if err := q.enqueue(ctx, queued{ctx: q.bg.Detach(ctx), path: path, text: text, op: op}); err != nil {
		q.mu.Lock()
		delete(q.seen, op)
		q.mu.Unlock()
		return err
	}
	return nil
}

// Err returns, and clears, the first failure not yet returned (only in
// [memory.RaiseErrors] mode; nil otherwise).
func (q *AppendQueue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.err
	q.err = nil
	return err
}

// Flush waits until every append added before it is done, then returns
// [AppendQueue.Err].
func (q *AppendQueue) Flush(ctx context.Context) error {
	if err := q.Wait(ctx); err != nil {
		return err
	}
	return q.Err()
}

// Wait waits until every append added before it is done, as Flush does,
// but leaves a failure for [AppendQueue.Err] (or the next Flush) to
// return: for a background job that needs the appends landed, such as a
// [Trigger]'s ([TriggerOptions.Wait]). It fails only with the context's
// error.
func (q *AppendQueue) Wait(ctx context.Context) error {
	done := make(chan struct{})
	if err := q.enqueue(ctx, queued{barrier: done}); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close refuses further adds ([ErrQueueClosed]), waits for the adds let in
// before it to be queued, and flushes. Call it on shutdown so that nothing
// queued is lost. ctx bounds it: when ctx is done first, the append in
// flight is canceled, the appends still queued are dropped (adding them to
// a new queue retries them; the store's receipts make that exactly once),
// and Close returns ctx's error.
func (q *AppendQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	queued := make(chan struct{})
	go func() { q.adding.Wait(); close(queued) }()
	select {
	case <-queued:
	case <-ctx.Done():
		q.bg.Close()
		return ctx.Err()
	}
	if err := q.Wait(ctx); err != nil {
		q.bg.Close()
		return err
	}
	if err := q.bg.Shutdown(ctx); err != nil {
		return err
	}
	return q.Err()
}

// admitted, when set (by tests), runs in Add between letting an append in
// and queueing it.
var admitted func()

// enqueue queues a job, waiting for room, and makes sure the worker runs
// (once Close stopped the queue's work, it drops what is queued instead).
func (q *AppendQueue) enqueue(ctx context.Context, job queued) error {
	select {
	case q.queue <- job:
	case <-ctx.Done():
		return ctx.Err()
	}
	q.mu.Lock()
	if !q.running {
		q.running = q.bg.Go(q.work)
	}
	stopped := !q.running
	q.mu.Unlock()
	if stopped {
		q.drop()
	}
	return nil
}

// drop empties the queue without appending: it releases the barriers of
// Wait and Flush and forgets the appends (Close cut them).
func (q *AppendQueue) drop() {
	for {
		select {
		case job := <-q.queue:
			if job.barrier != nil {
				close(job.barrier)
				continue
			}
			q.mu.Lock()
			delete(q.seen, job.op)
			q.mu.Unlock()
		default:
			return
		}
	}
}

// work drains the queue in order and ends when it is empty, or drops it
// when ctx (the queue's) is canceled; enqueue starts it again. A job sent
// after the emptiness check finds running false and starts a new worker.
func (q *AppendQueue) work(ctx context.Context) {
	for {
		if ctx.Err() != nil {
			q.mu.Lock()
			q.running = false
			q.mu.Unlock()
			q.drop()
			return
		}
		select {
		case job := <-q.queue:
			q.do(job)
		default:
			q.mu.Lock()
			if len(q.queue) == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
		}
	}
}

func (q *AppendQueue) do(job queued) {
	if job.barrier != nil {
		close(job.barrier)
		return
	}
	opts := &memory.AppendOptions{OperationID: job.op, MaxMemorySize: q.mem.Limits().MaxMemorySize}
	var err error
	if q.rotate != nil {
		err = q.appendSeries(job, opts)
	} else {
		_, err = memory.Append(job.ctx, q.mem.Store(), job.path, job.text, opts)
	}
	if errors.Is(err, store.ErrOperationConflict) {
		err = nil // appended before, with other text (rendered differently)
	}
	landed := err == nil || errors.Is(err, ErrRetention)
	q.mu.Lock()
	if landed {
		if _, ok := q.seen[job.op]; ok {
			q.seen[job.op] = true
		}
	}
	if err == nil {
		q.mu.Unlock()
		return
	}
	if !landed {
		delete(q.seen, job.op)
	}
	raise := q.mem.ErrorMode() == memory.RaiseErrors
	if raise && q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	if q.onErr != nil {
		q.onErr(job.ctx, err)
	}
	if !raise {
		msg := "agentmem: a background append failed; adding it again retries it"
		if landed {
			msg = "agentmem: a background append landed, but its series' retention failed; the next rotation retries it"
		}
		q.mem.Logger().WarnContext(job.ctx, msg, "backend", q.mem.Store().Backend(), "error", err)
	}
}

// maxSeries bounds the newest files a rotating queue remembers; past it
// the record starts over and listings answer instead.
const maxSeries = 10_000

// appendSeries runs one rotating append, starting at the newest file the
// queue knows for the series.
func (q *AppendQueue) appendSeries(job queued, opts *memory.AppendOptions) error {
	if len(q.newest) >= maxSeries {
		clear(q.newest)
	}
	n := q.newest[job.path]
	_, err := appendSeries(job.ctx, q.mem.Store(), job.path, job.text, opts, q.rotate, &n)
	if n > 0 {
		q.newest[job.path] = n
	}
	return err
}
