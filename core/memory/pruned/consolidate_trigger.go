package pruned

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/background"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [TriggerOptions].
const (
	DefaultTriggerEvery   = 20
	DefaultTriggerMaxRuns = 4
)

// maxTriggerPending bounds the namespaces a [Trigger] holds waiting; past
// it new ones are dropped until the worker catches up (their pruned text
// stays, and the next trigger picks it up).
const maxTriggerPending = 10_000

// TriggerOptions configures a [Trigger]: when to run [Consolidate]
// in the background for a namespace whose history is being pruned.
type TriggerOptions struct {
	// Model is the consolidation model (required).
	Model Model
	// Every consolidates a namespace once this many pruned entries were
	// reported for it. Default 20.
	Every int
	// Interval, when > 0, also consolidates every namespace with pruned
	// entries not yet consolidated, this often.
	Interval time.Duration
	// MaxRuns bounds the runs of one trigger while a run reports More.
	// Default 4.
	MaxRuns int
	// Options are passed to each run (PrunedFile, budget, prompt, …);
	// DryRun is ignored.
	Options *ConsolidateOptions
	// Wait, when set, runs before each consolidation, so that the pruned
	// entries reported have landed (an adapter passes its append queue's
	// [AppendQueue.Wait]).
	Wait func(ctx context.Context) error
	// OnError receives each failed run, from the trigger's goroutine (it
	// must not call the trigger's Flush or Close). A failure is also
	// logged at Warn ([memory.Options.Logger]).
	OnError func(ctx context.Context, err error)
}

// ErrTriggerClosed reports a [Trigger] used after Close.
var ErrTriggerClosed = errors.New("pruned: the consolidation trigger is closed")

// Trigger runs consolidations in the background: after Every pruned
// entries of a namespace, or on an Interval. It never blocks the caller
// of [Trigger.Pruned] (a model request): runs happen on one goroutine of
// its own, one namespace at a time, bounded by MaxRuns, under the
// trigger's own context ([background.Group.Detach]), never a request's:
// a tracer makes each run a trace of its own, linked to the report that
// made it due. The Interval's ticker starts with [NewTrigger];
// [Trigger.Close] stops it all. It is safe for concurrent use.
type Trigger struct {
	bg  *background.Group
	m   *memory.Memory
	o   TriggerOptions
	cop ConsolidateOptions

	mu      sync.Mutex
	counts  map[string]int             // namespace → pruned entries since its last run
	latest  map[string]context.Context // namespace with counts > 0 → its latest report's context (detached)
	seen    map[string]struct{}        // namespace and operation id reported to PrunedOnce
	pending map[string]context.Context // namespaces due, with the values of their first report
	order   []string
	running bool
	closed  bool
	idle    *sync.Cond // signalled when the worker stops
}

// WindowTriggerOptions completes o for a history window that appends its
// pruned contents to prunedFile through queue (the adk and eino windows'
// HistoryWindow.Consolidate): the runs consolidate prunedFile unless
// o.Options names another, each run first waits for the appends queued so
// far (then for o.Wait, if set), and failures go to onErr unless o.OnError
// is set.
func WindowTriggerOptions(o TriggerOptions, prunedFile string, queue *AppendQueue, onErr func(context.Context, error)) TriggerOptions {
	var cop ConsolidateOptions
	if o.Options != nil {
		cop = *o.Options
	}
	if cop.PrunedFile == "" {
		cop.PrunedFile = prunedFile
	}
	o.Options = &cop
	if wait := o.Wait; wait != nil {
		o.Wait = func(ctx context.Context) error {
			if err := queue.Wait(ctx); err != nil {
				return err
			}
			return wait(ctx)
		}
	} else {
		o.Wait = queue.Wait
	}
	if o.OnError == nil {
		o.OnError = onErr
	}
	return o
}

// NewTrigger returns a trigger of consolidations over m. It fails with
// [ErrNilModel] without a model, and with store.ErrNilArgument when m is
// nil.
func NewTrigger(m *memory.Memory, o TriggerOptions) (*Trigger, error) {
	if m == nil {
		return nil, fmt.Errorf("pruned: pass NewTrigger a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	if o.Model == nil {
		return nil, ErrNilModel
	}
	if o.Every <= 0 {
		o.Every = DefaultTriggerEvery
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = DefaultTriggerMaxRuns
	}
	t := &Trigger{bg: background.New(), m: m, o: o, counts: map[string]int{}, latest: map[string]context.Context{},
		seen: map[string]struct{}{}, pending: map[string]context.Context{}}
	if o.Options != nil {
		t.cop = *o.Options
	}
	t.cop.DryRun = false
	t.idle = sync.NewCond(&t.mu)
	if o.Interval > 0 {
		t.bg.Go(t.tick)
	}
	return t, nil
}

// Pruned reports n entries pruned for namespace (as [memory.Invocation.Namespace]
// is used). It only counts and, when the namespace is due, schedules a
// run; it never waits. The run keeps ctx's values (a namespace or metadata
// function may read them) but not its cancellation or deadline: it runs
// under the trigger's own context ([background.Group.Detach]).
func (t *Trigger) Pruned(ctx context.Context, namespace string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || n <= 0 {
		return
	}
	if _, ok := t.counts[namespace]; !ok && len(t.counts) >= maxTriggerPending {
		return
	}
	t.counts[namespace] += n
	t.latest[namespace] = t.bg.Detach(ctx)
	if t.counts[namespace] >= t.o.Every {
		t.schedule(namespace)
	}
}

// maxTriggerSeen bounds the record of entries reported to
// [Trigger.PrunedOnce]; past it the record starts over (an entry reported
// again then counts again: at worst a run that finds little to do).
const maxTriggerSeen = 100_000

// PrunedOnce reports the pruned entries of namespace named by ops (their
// append's operation ids), as Pruned does, counting each op once: a
// history window prunes the same oldest entries again on every request,
// and only the new ones count towards Every. It never waits.
func (t *Trigger) PrunedOnce(ctx context.Context, namespace string, ops ...string) {
	t.mu.Lock()
	n := 0
	if !t.closed {
		for _, op := range ops {
			key := namespace + "\x00" + op
			if _, ok := t.seen[key]; ok {
				continue
			}
			if len(t.seen) >= maxTriggerSeen {
				clear(t.seen)
			}
			t.seen[key] = struct{}{}
			n++
		}
	}
	t.mu.Unlock()
	t.Pruned(ctx, namespace, n)
}

// schedule makes namespace due, with the context of its latest report;
// t.mu is held.
func (t *Trigger) schedule(namespace string) {
	if _, ok := t.pending[namespace]; !ok {
		t.pending[namespace] = t.latest[namespace]
		t.order = append(t.order, namespace)
	}
	t.counts[namespace] = 0
	delete(t.latest, namespace)
	if !t.running {
		t.running = t.bg.Go(t.work)
	}
}

// tick schedules every namespace with pruned entries each Interval, until
// Close.
func (t *Trigger) tick(ctx context.Context) {
	tk := time.NewTicker(t.o.Interval)
	defer tk.Stop()
	for {
		select {
		case <-t.bg.Stopping():
			return
		case <-ctx.Done():
			return
		case <-tk.C:
			t.mu.Lock()
			for ns, n := range t.counts {
				if n > 0 && !t.closed {
					t.schedule(ns)
				}
			}
			t.mu.Unlock()
		}
	}
}

// work runs the due namespaces, oldest first, until none is left, or
// until ctx (the trigger's) is canceled: then it drops them.
func (t *Trigger) work(ctx context.Context) {
	for {
		t.mu.Lock()
		if ctx.Err() != nil {
			clear(t.pending)
			t.order = nil
		}
		if len(t.order) == 0 {
			t.running = false
			t.idle.Broadcast()
			t.mu.Unlock()
			return
		}
		ns := t.order[0]
		t.order = t.order[1:]
		rctx := t.pending[ns]
		if rctx == nil {
			rctx = ctx
		}
		delete(t.pending, ns)
		t.mu.Unlock()
		if err := t.run(rctx, ns); err != nil {
			if t.o.OnError != nil {
				t.o.OnError(rctx, err)
			}
			t.m.Logger().WarnContext(rctx, "agentmem: background consolidation failed; the next trigger tries again",
				"backend", t.m.Store().Backend(), "error", err)
		}
	}
}

func (t *Trigger) run(ctx context.Context, ns string) error {
	if t.o.Wait != nil {
		if err := t.o.Wait(ctx); err != nil {
			return err
		}
	}
	for range t.o.MaxRuns {
		res, err := Consolidate(ctx, t.m, ns, t.o.Model, &t.cop)
		if err != nil || !res.More {
			return err
		}
	}
	return nil
}

// Flush waits until no run is due or running, or ctx ends.
func (t *Trigger) Flush(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		t.mu.Lock()
		for t.running {
			t.idle.Wait()
		}
		t.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the schedule, then waits for the runs already due (see
// [Trigger.Flush]). Later reports are ignored. ctx bounds it: when ctx is
// done first, the run in flight is canceled, the runs still due are
// dropped (their pruned text stays, and a later trigger consolidates it),
// and Close returns ctx's error.
func (t *Trigger) Close(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	if err := t.Flush(ctx); err != nil {
		t.bg.Close()
		return err
	}
	return t.bg.Shutdown(ctx)
}
