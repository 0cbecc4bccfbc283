package contract

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// advGate holds the first call that reaches it until it is released.
type advGate struct {
	entered  chan struct{} // closed when the first call arrives
	released chan struct{}
	once     sync.Once
	release  func() // idempotent
}

func newAdvGate(t *testing.T) *advGate {
	g := &advGate{entered: make(chan struct{}), released: make(chan struct{})}
	g.release = sync.OnceFunc(func() { close(g.released) })
	t.Cleanup(g.release) // never leave a stalled call behind
	return g
}

// hold blocks the first caller until release; later callers pass.
func (g *advGate) hold() {
	first := false
	g.once.Do(func() { first = true; close(g.entered) })
	if first {
		<-g.released
	}
}

// advClock is a settable clock shared by the stores of one case, so that
// leases run out (or not) exactly when the case says.
type advClock struct {
	mu sync.Mutex
	t  time.Time
}

func newAdvClock() *advClock { return &advClock{t: time.Now()} }

func (c *advClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *advClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *advClock) options() *store.Options {
	return &store.Options{PendingTimeout: 50 * time.Millisecond, ReceiptRetention: time.Hour, Now: c.Now}
}

// advHooks returns a wrap function for Env.NewStore installing hooks.
func advHooks(before func(call string) error, after func(call string, err error) error) func(driver.Driver) driver.Driver {
	return func(d driver.Driver) driver.Driver {
		i := NewInterceptor(d)
		i.Before, i.After = before, after
		return i
	}
}

// isApply reports whether call is one that applies a file change.
func isApply(call string) bool { return call == "ReplaceFile" || call == "Mutate" }

type advResult struct {
	m   store.Mutation
	err error
}

type advOpResult struct {
	g   *store.Mutation
	err error
}

// advCrashBeforeApply returns a store whose process dies just before its
// first file change: a tracked mutation leaves its reservation pending and
// nothing else.
func advCrashBeforeApply(t *testing.T, e *Env, opts *store.Options) *store.Store {
	var dead atomic.Bool
	return e.NewStore(t, opts, advHooks(func(call string) error {
		if dead.Load() || isApply(call) {
			dead.Store(true)
			return ErrInjected
		}
		return nil
	}, nil))
}

// advCrashAfterReserve returns a store whose process dies right after its
// reservation lands (or, on the atomic path, just before its mutation).
func advCrashAfterReserve(t *testing.T, e *Env) *store.Store {
	var dead atomic.Bool
	return e.NewStore(t, e.Options(), advHooks(func(call string) error {
		if dead.Load() || call == "Mutate" {
			dead.Store(true)
			return ErrInjected
		}
		return nil
	}, func(call string, err error) error {
		if call == "ReserveReceipt" {
			dead.Store(true)
			return errors.Join(ErrInjected, err)
		}
		return err
	}))
}

// advCtxDriver fails the receipt clean-up calls once their context is
// done, as a real backend client does.
type advCtxDriver struct{ *Interceptor }

func (d advCtxDriver) DropReceipt(ctx context.Context, id, version string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.Interceptor.DropReceipt(ctx, id, version)
}

func (d advCtxDriver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.Interceptor.CompleteReceipt(ctx, r)
}

func (d advCtxDriver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.Interceptor.GetReceipt(ctx, id)
}

// advContentGate holds the first call that writes file content (a create,
// replace or atomic mutation of a live row, not a tombstone) at g.
type advContentGate struct {
	*Interceptor
	g *advGate
}

func (d advContentGate) CreateFile(ctx context.Context, f driver.File) error {
	if !f.Tombstone {
		d.g.hold()
	}
	return d.Interceptor.CreateFile(ctx, f)
}

func (d advContentGate) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if !f.Tombstone {
		d.g.hold()
	}
	return d.Interceptor.ReplaceFile(ctx, f, expected)
}

func (d advContentGate) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	d.g.hold()
	return d.Interceptor.Mutate(ctx, p)
}

// advStallContent returns a wrap function that stalls the first content
// write at g.
func advStallContent(g *advGate) func(driver.Driver) driver.Driver {
	return func(d driver.Driver) driver.Driver { return advContentGate{NewInterceptor(d), g} }
}

// advStalledCreate starts creating path with o on a store whose content
// write stalls at the returned gate, and returns once the stalled attempt's
// lease has run out. The attempt's result arrives on the channel.
func advStalledCreate(t *testing.T, e *Env, path string, o *store.Operation) (*advGate, <-chan advResult) {
	g := newAdvGate(t)
	slow := e.NewStore(t, e.Options(), advStallContent(g))
	done := make(chan advResult, 1)
	go func() {
		m, err := slow.Write(ctx(t), store.WriteRequest{Path: path, Content: opLine + "\n", Operation: o})
		done <- advResult{m, err}
	}()
	<-g.entered
	e.expireLeases() // past the suite's pending timeout
	return g, done
}

// advDeadAttempt leaves at path a pending reservation of o whose attempt
// died before its write, moves the row on (so the attempt can never land)
// and returns a clock past the attempt's lease with the row's version.
func advDeadAttempt(t *testing.T, e *Env, path string, o *store.Operation) (*advClock, string) {
	clk := newAdvClock()
	v := create(t, e.Store, path, "seed\n")
	_, err := advCrashBeforeApply(t, e, clk.options()).Write(ctx(t), store.WriteRequest{Path: path, Content: "lost", Expected: v, Operation: o})
	mustErr(t, err, ErrInjected, "dead attempt")
	w := write(t, e.Store, path, "seed\nother\n", v).Version
	clk.Add(time.Hour)
	return clk, w
}

// advWriteAsync starts the write of o over version w on a store with the
// before hook; its result arrives on the channel.
func advWriteAsync(t *testing.T, e *Env, clk *advClock, path, w string, o *store.Operation, before func(string) error) <-chan advResult {
	b := e.NewStore(t, clk.options(), advHooks(before, nil))
	done := make(chan advResult, 1)
	go func() {
		m, err := b.Write(ctx(t), store.WriteRequest{Path: path, Content: "seed\nother\n" + opLine + "\n", Expected: w, Operation: o})
		done <- advResult{m, err}
	}()
	return done
}
