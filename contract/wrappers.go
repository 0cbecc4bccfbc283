package contract

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// Interceptor wraps a driver and runs hooks around every call. It
// implements every optional interface and reports, through
// driver.CapabilityReporter, only those the inner driver really offers
// (further restricted by Hide), so the store never uses a fast path the
// backend lacks. Counter, Faults and Primitives are built on it.
type Interceptor struct {
	inner    driver.Driver
	caps     driver.Capabilities
	keepOpen bool
	// Before runs before each call; a non-nil error is returned without
	// calling the inner driver.
	Before func(call string) error
	// After runs after each call with its error and returns the error the
	// caller sees.
	After func(call string, err error) error
}

var (
	_ driver.Driver             = (*Interceptor)(nil)
	_ driver.Mutator            = (*Interceptor)(nil)
	_ driver.CollisionChecker   = (*Interceptor)(nil)
	_ driver.Appender           = (*Interceptor)(nil)
	_ driver.BatchGetter        = (*Interceptor)(nil)
	_ driver.ScopeReader        = (*Interceptor)(nil)
	_ driver.SnapshotReader     = (*Interceptor)(nil)
	_ driver.Pruner             = (*Interceptor)(nil)
	_ driver.Historian          = (*Interceptor)(nil)
	_ driver.CapabilityReporter = (*Interceptor)(nil)
	_ driver.Namer              = (*Interceptor)(nil)
)

// NewInterceptor wraps d, forwarding its capabilities.
func NewInterceptor(d driver.Driver) *Interceptor {
	return &Interceptor{inner: d, caps: driver.CapabilitiesOf(d)}
}

// Primitives wraps d so that the store sees only the nine primitives: the
// contract's "primitives" mode. A driver's history (driver.Historian),
// which is storage rather than a fast path, stays visible, so that the
// store records it over the primitives.
func Primitives(d driver.Driver) driver.Driver {
	i := NewInterceptor(d)
	i.caps = driver.Capabilities{History: i.caps.History}
	return i
}

// Inner returns the wrapped driver.
func (i *Interceptor) Inner() driver.Driver { return i.inner }

// DriverCapabilities implements driver.CapabilityReporter.
func (i *Interceptor) DriverCapabilities() driver.Capabilities { return i.caps }

// Name implements driver.Namer: the inner driver's backend name.
func (i *Interceptor) Name() string { return driver.Name(i.inner) }

func (i *Interceptor) before(call string) error {
	if i.Before != nil {
		return i.Before(call)
	}
	return nil
}

func (i *Interceptor) after(call string, err error) error {
	if i.After != nil {
		return i.After(call, err)
	}
	return err
}

func do0(i *Interceptor, call string, f func() error) error {
	if err := i.before(call); err != nil {
		return err
	}
	return i.after(call, f())
}

func do1[T any](i *Interceptor, call string, f func() (T, error)) (T, error) {
	var zero T
	if err := i.before(call); err != nil {
		return zero, err
	}
	v, err := f()
	if err = i.after(call, err); err != nil {
		return zero, err
	}
	return v, nil
}

// GetFile implements driver.Driver.
func (i *Interceptor) GetFile(ctx context.Context, path string) (*driver.File, error) {
	return do1(i, "GetFile", func() (*driver.File, error) { return i.inner.GetFile(ctx, path) })
}

// ListFiles implements driver.Driver.
func (i *Interceptor) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	return do1(i, "ListFiles", func() ([]driver.Entry, error) { return i.inner.ListFiles(ctx, p) })
}

// CreateFile implements driver.Driver.
func (i *Interceptor) CreateFile(ctx context.Context, f driver.File) error {
	return do0(i, "CreateFile", func() error { return i.inner.CreateFile(ctx, f) })
}

// ReplaceFile implements driver.Driver.
func (i *Interceptor) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	return do0(i, "ReplaceFile", func() error { return i.inner.ReplaceFile(ctx, f, expected) })
}

// DeleteFile implements driver.Driver.
func (i *Interceptor) DeleteFile(ctx context.Context, path, expected string) error {
	return do0(i, "DeleteFile", func() error { return i.inner.DeleteFile(ctx, path, expected) })
}

// GetReceipt implements driver.Driver.
func (i *Interceptor) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	return do1(i, "GetReceipt", func() (*driver.Receipt, error) { return i.inner.GetReceipt(ctx, id) })
}

// ReserveReceipt implements driver.Driver.
func (i *Interceptor) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	return do0(i, "ReserveReceipt", func() error { return i.inner.ReserveReceipt(ctx, r) })
}

// CompleteReceipt implements driver.Driver.
func (i *Interceptor) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	return do0(i, "CompleteReceipt", func() error { return i.inner.CompleteReceipt(ctx, r) })
}

// DropReceipt implements driver.Driver.
func (i *Interceptor) DropReceipt(ctx context.Context, id, version string) error {
	return do0(i, "DropReceipt", func() error { return i.inner.DropReceipt(ctx, id, version) })
}

var errUnsupported = errors.New("contract: optional interface not supported by the wrapped driver")

// Mutate implements driver.Mutator.
func (i *Interceptor) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	m, ok := i.inner.(driver.Mutator)
	if !ok {
		return driver.MutateResult{}, errUnsupported
	}
	return do1(i, "Mutate", func() (driver.MutateResult, error) { return m.Mutate(ctx, p) })
}

// Append implements driver.Appender.
func (i *Interceptor) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	a, ok := i.inner.(driver.Appender)
	if !ok {
		return driver.AppendResult{}, errUnsupported
	}
	return do1(i, "Append", func() (driver.AppendResult, error) { return a.Append(ctx, p) })
}

// ChecksCollisions implements driver.CollisionChecker: what the wrapped
// driver reports (false when it is no CollisionChecker).
func (i *Interceptor) ChecksCollisions() bool {
	c, ok := i.inner.(driver.CollisionChecker)
	return ok && c.ChecksCollisions()
}

// ReadSnapshot implements driver.SnapshotReader.
func (i *Interceptor) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	r, ok := i.inner.(driver.SnapshotReader)
	if !ok {
		return nil, nil, errUnsupported
	}
	var f *driver.File
	entries, err := do1(i, "ReadSnapshot", func() ([]driver.Entry, error) {
		var err error
		var e []driver.Entry
		f, e, err = r.ReadSnapshot(ctx, p)
		return e, err
	})
	if err != nil {
		return nil, nil, err
	}
	return f, entries, nil
}

// GetFiles implements driver.BatchGetter.
func (i *Interceptor) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	b, ok := i.inner.(driver.BatchGetter)
	if !ok {
		return nil, errUnsupported
	}
	return do1(i, "GetFiles", func() ([]*driver.File, error) { return b.GetFiles(ctx, paths) })
}

// ReadScope implements driver.ScopeReader.
func (i *Interceptor) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	s, ok := i.inner.(driver.ScopeReader)
	if !ok {
		return nil, errUnsupported
	}
	return do1(i, "ReadScope", func() ([]driver.ScopeFile, error) { return s.ReadScope(ctx, p) })
}

// PruneExpired implements driver.Pruner.
func (i *Interceptor) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	p, ok := i.inner.(driver.Pruner)
	if !ok {
		return 0, errUnsupported
	}
	return do1(i, "PruneExpired", func() (int, error) { return p.PruneExpired(ctx, now) })
}

// historian returns the inner driver's Historian.
func (i *Interceptor) historian() (driver.Historian, error) {
	h, ok := i.inner.(driver.Historian)
	if !ok {
		return nil, errUnsupported
	}
	return h, nil
}

// PutHistory implements driver.Historian.
func (i *Interceptor) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	h, err := i.historian()
	if err != nil {
		return err
	}
	return do0(i, "PutHistory", func() error { return h.PutHistory(ctx, e) })
}

// CompleteHistory implements driver.Historian.
func (i *Interceptor) CompleteHistory(ctx context.Context, path, version string) error {
	h, err := i.historian()
	if err != nil {
		return err
	}
	return do0(i, "CompleteHistory", func() error { return h.CompleteHistory(ctx, path, version) })
}

// DropHistory implements driver.Historian.
func (i *Interceptor) DropHistory(ctx context.Context, path, version string) error {
	h, err := i.historian()
	if err != nil {
		return err
	}
	return do0(i, "DropHistory", func() error { return h.DropHistory(ctx, path, version) })
}

// GetHistory implements driver.Historian.
func (i *Interceptor) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	h, err := i.historian()
	if err != nil {
		return nil, err
	}
	return do1(i, "GetHistory", func() (*driver.HistoryEntry, error) { return h.GetHistory(ctx, path, version) })
}

// ListHistory implements driver.Historian.
func (i *Interceptor) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	h, err := i.historian()
	if err != nil {
		return nil, err
	}
	return do1(i, "ListHistory", func() ([]driver.HistoryEntry, error) { return h.ListHistory(ctx, p) })
}

// DeleteHistory implements driver.Historian.
func (i *Interceptor) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	h, err := i.historian()
	if err != nil {
		return 0, err
	}
	return do1(i, "DeleteHistory", func() (int, error) { return h.DeleteHistory(ctx, prefix) })
}

// Close implements driver.Driver.
func (i *Interceptor) Close() error {
	if i.keepOpen {
		return nil
	}
	return i.inner.Close()
}

var (
	_ driver.Driver             = (*Counter)(nil)
	_ driver.Mutator            = (*Counter)(nil)
	_ driver.CapabilityReporter = (*Counter)(nil)
	_ driver.Driver             = (*Faults)(nil)
	_ driver.Mutator            = (*Faults)(nil)
	_ driver.CapabilityReporter = (*Faults)(nil)
)

// Counter is a driver wrapper that counts calls per primitive; benchmarks
// use it to report backend requests per operation. It also counts round
// trips: calls that start while no other call is in flight (calls issued
// concurrently count once).
type Counter struct {
	*Interceptor
	mu       sync.Mutex
	counts   map[string]int
	inflight int
	rounds   int
}

// NewCounter wraps d with a call counter.
func NewCounter(d driver.Driver) *Counter {
	c := &Counter{Interceptor: NewInterceptor(d), counts: map[string]int{}}
	c.Before = func(call string) error {
		c.mu.Lock()
		c.counts[call]++
		if c.inflight == 0 {
			c.rounds++
		}
		c.inflight++
		c.mu.Unlock()
		return nil
	}
	c.After = func(call string, err error) error {
		c.mu.Lock()
		c.inflight--
		c.mu.Unlock()
		return err
	}
	return c
}

// Rounds returns the round trips since the last Reset: calls that started
// while no other call was in flight.
func (c *Counter) Rounds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rounds
}

// Total returns the number of calls since the last Reset.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Counts returns the calls per primitive since the last Reset.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Reset zeroes the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
	c.rounds = 0
}

// FaultMode says how an injected fault behaves.
type FaultMode int

// The fault modes.
const (
	// FailBefore fails the call before it reaches the backend.
	FailBefore FaultMode = iota
	// ReplyLost lets the call apply, then reports a failure.
	ReplyLost
	// Crash fails the call before it reaches the backend, and every later
	// call too, as if the process had died.
	Crash
	// CrashAfter lets the call apply, then fails it and every later call,
	// as if the process had died right after the backend answered.
	CrashAfter
)

// String names the mode, as in subtest names.
func (m FaultMode) String() string {
	return [...]string{"fail_before", "reply_lost", "crash", "crash_after"}[m]
}

// ErrInjected is the error an injected fault reports.
var ErrInjected = errors.New("contract: injected fault")

// Faults is a driver wrapper that makes the k-th call after Inject fail.
type Faults struct {
	*Interceptor
	mu      sync.Mutex
	k       int
	mode    FaultMode
	crashed bool
	calls   []string
}

// NewFaults wraps d; no fault is armed until Inject.
func NewFaults(d driver.Driver) *Faults {
	f := &Faults{Interceptor: NewInterceptor(d)}
	f.Before = f.beforeCall
	f.After = f.afterCall
	return f
}

// Inject arms a fault at the k-th call (1-based) from now.
func (f *Faults) Inject(k int, mode FaultMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.k, f.mode, f.calls = k, mode, nil
}

// Calls returns the calls seen since Inject, in order.
func (f *Faults) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Faults) beforeCall(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if f.crashed {
		return ErrInjected
	}
	if len(f.calls) == f.k && (f.mode == FailBefore || f.mode == Crash) {
		f.crashed = f.mode == Crash
		return ErrInjected
	}
	return nil
}

func (f *Faults) afterCall(call string, err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == f.k && (f.mode == ReplyLost || f.mode == CrashAfter) && !f.crashed {
		f.crashed = f.mode == CrashAfter
		return errors.Join(ErrInjected, err)
	}
	return err
}
