package memory

import (
	"context"
	"errors"
	"sync"

	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [QueueOptions].
const DefaultQueueSize = 256

// ErrQueueClosed reports an [AppendQueue.Add] after [AppendQueue.Close]:
// create a new queue (or a new adapter value) for further work.
var ErrQueueClosed = errors.New("memory: the append queue is closed; create a new one for further work")

// QueueOptions configures an [AppendQueue]. Nil means defaults.
type QueueOptions struct {
	// Size bounds the appends waiting in the queue; Add waits for room
	// (or its context) when it is full. Default 256.
	Size int
	// OnError, when set, receives every failed append with its full
	// detail, in both error modes. It runs on the queue's goroutine: it
	// must not wait for the queue (Add, Flush, Close).
	OnError func(ctx context.Context, err error)
}

// AppendQueue runs [Append] in the background, in the order of [AppendQueue.Add],
// each operation id at most once, for hooks that must not wait for the
// store (such as an adapter's pruned-history window). Failures follow the
// notebook's [Options.InjectionErrors]: in [IgnoreErrors] mode they are
// logged at Warn ([Options.Logger]); in [RaiseErrors] mode the first one is
// kept for [AppendQueue.Err], [AppendQueue.Flush] or [AppendQueue.Close].
// Either way the operation is forgotten, so adding it again retries it.
//
// One goroutine drains the queue while it holds work and ends when it is
// empty, so an idle queue holds no goroutine. Appends run with the values
// of the context given to Add but not its cancellation. It is safe for
// concurrent use.
type AppendQueue struct {
	mem   *Memory
	onErr func(context.Context, error)
	queue chan queued

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
// error mode and logger.
func (m *Memory) NewAppendQueue(opts *QueueOptions) *AppendQueue {
	var o QueueOptions
	if opts != nil {
		o = *opts
	}
	if o.Size <= 0 {
		o.Size = DefaultQueueSize
	}
	return &AppendQueue{mem: m, onErr: o.OnError, queue: make(chan queued, o.Size), seen: map[string]bool{}}
}

// Add queues text for the file at path (a full store path) under the
// operation id op (required: it makes the append exactly once, see
// [AppendOptions.OperationID]). An op already appended or waiting is
// skipped, and so, after a restart, is one the store has a receipt for.
// It waits for room while the queue is full. Errors: [ErrQueueClosed],
// [ErrMissingID] for an empty op, the context's error.
func (q *AppendQueue) Add(ctx context.Context, path, text, op string) error {
	if op == "" {
		return ErrMissingID
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
	if err := q.enqueue(ctx, queued{ctx: context.WithoutCancel(ctx), path: path, text: text, op: op}); err != nil {
		q.mu.Lock()
		delete(q.seen, op)
		q.mu.Unlock()
		return err
	}
	return nil
}

// Err returns, and clears, the first failure not yet returned (only in
// [RaiseErrors] mode; nil otherwise).
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
	done := make(chan struct{})
	if err := q.enqueue(ctx, queued{barrier: done}); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return q.Err()
}

// Close refuses further adds ([ErrQueueClosed]), waits for the adds let in
// before it to be queued, and flushes. Call it on shutdown so that nothing
// queued is lost.
func (q *AppendQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	queued := make(chan struct{})
	go func() { q.adding.Wait(); close(queued) }()
	select {
	case <-queued:
	case <-ctx.Done():
		return ctx.Err()
	}
	return q.Flush(ctx)
}

// admitted, when set (by tests), runs in Add between letting an append in
// and queueing it.
var admitted func()

// enqueue queues a job, waiting for room, and makes sure the worker runs.
func (q *AppendQueue) enqueue(ctx context.Context, job queued) error {
	select {
	case q.queue <- job:
	case <-ctx.Done():
		return ctx.Err()
	}
	q.mu.Lock()
	if !q.running {
		q.running = true
		go q.work()
	}
	q.mu.Unlock()
	return nil
}

// work drains the queue in order and ends when it is empty; enqueue
// starts it again. A job sent after the emptiness check finds running
// false and starts a new worker.
func (q *AppendQueue) work() {
	for {
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
	_, err := Append(job.ctx, q.mem.s, job.path, job.text, &AppendOptions{OperationID: job.op, MaxMemorySize: q.mem.limits.MaxMemorySize})
	if errors.Is(err, store.ErrOperationConflict) {
		err = nil // appended before, with other text (rendered differently)
	}
	q.mu.Lock()
	if err == nil {
		if _, ok := q.seen[job.op]; ok {
			q.seen[job.op] = true
		}
		q.mu.Unlock()
		return
	}
	delete(q.seen, job.op)
	raise := q.mem.errMode == RaiseErrors
	if raise && q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	if q.onErr != nil {
		q.onErr(job.ctx, err)
	}
	if !raise {
		q.mem.log().WarnContext(job.ctx, "agentmem: a background append failed; adding it again retries it",
			"backend", q.mem.backend, "error", err)
	}
}
