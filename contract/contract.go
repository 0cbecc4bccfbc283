// Package contract is the conformance suite every agentmem backend runs —
// ours and third parties' — plus the driver wrappers it and the benchmarks
// use: [Primitives] (hide every optional interface), [Counter] (count
// backend calls) and [Faults] (fail the k-th call, before it reaches the
// backend, after it applied, or as a crash).
//
// A backend's test calls [Run] with a [Harness] that builds a fresh, empty,
// isolated driver per subtest. Subtests are named
// TestConformance/<backend>/<mode>/<case>; mode "full" uses the whole
// driver and mode "primitives" only the nine primitives, so the store's
// receipt algorithm is proven on every backend. The suite checks sentinel
// errors, never messages, and never skips a case on its own.
package contract

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// Harness describes one backend to the suite.
type Harness struct {
	// Name is the backend label: memstore, filestore, sqlite, postgres,
	// dynamodb, firestore, cosmosdb, or a third party's own.
	Name string
	// NewDriver returns a fresh, empty driver isolated from every other
	// subtest (its own table, namespace or directory). Register cleanup
	// with t.Cleanup. Two calls within one subtest must return drivers
	// that share nothing.
	NewDriver func(t *testing.T) driver.Driver
	// Reopen, when set, returns a second driver over the same data as d
	// (another client or process view); used to prove cross-instance CAS.
	// When nil, the suite shares d itself.
	Reopen func(t *testing.T, d driver.Driver) driver.Driver
	// Capabilities declares the optional interfaces the driver offers; the
	// suite checks that they match what the store discovers.
	Capabilities driver.Capabilities
	// Writers and Appends size the concurrent-append case (default 8 × 25).
	// Slow emulators may use fewer; say why where you set them.
	Writers, Appends int
	// Parallel runs the cases of a mode in parallel.
	Parallel bool
	// Cases, when set, adds backend-specific cases to each mode.
	Cases []Case
}

// Case is one conformance case.
type Case struct {
	// Name is the subtest name (snake_case).
	Name string
	// Run runs the case on a fresh Env.
	Run func(t *testing.T, e *Env)
}

// Env is what a case gets: a fresh store over a fresh driver.
type Env struct {
	// Store is the store under test.
	Store *store.Store
	// Driver is the driver the store runs on (wrapped in primitives mode).
	Driver driver.Driver
	// Raw is the backend's own driver, unwrapped.
	Raw driver.Driver
	// Mode is "full" or "primitives".
	Mode string
	// Clock is the time every store of the Env sees.
	Clock *Clock
	h     *Harness
}

// NewStore returns another store over the same driver, configured by opts,
// and wrapped by wrap (nil = as the Env's). It models a second process.
func (e *Env) NewStore(t *testing.T, opts *store.Options, wrap func(driver.Driver) driver.Driver) *store.Store {
	d := e.Driver
	if wrap != nil {
		d = wrap(d)
	}
	s := store.New(shared(d), opts)
	t.Cleanup(func() { _ = s.Close() }) // its background index work ends with the test
	return s
}

// Reopen returns a store over a second driver instance on the same data.
func (e *Env) Reopen(t *testing.T) *store.Store {
	d := e.Raw
	if e.h.Reopen != nil {
		d = e.h.Reopen(t, e.Raw)
	}
	if e.Mode == modePrimitives {
		d = Primitives(d)
	}
	return store.New(shared(d), e.Options())
}

// shared wraps d so that closing the wrapper leaves d open.
func shared(d driver.Driver) driver.Driver {
	i := NewInterceptor(d)
	i.keepOpen = true
	return i
}

const (
	modeFull       = "full"
	modePrimitives = "primitives"
)

// PendingTimeout is the lease the suite's stores give a live attempt. It is
// long, so that a slow backend under load never sees a live attempt
// settled; cases that need a dead attempt's lease to run out move the
// Env's clock instead of sleeping.
const PendingTimeout = 10 * time.Second

// Clock is the time the stores of one Env see: the real time plus an offset
// that a case can move forward.
type Clock struct{ offset atomic.Int64 }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// Options returns the store options of the Env's stores: its clock and the
// suite's PendingTimeout.
func (e *Env) Options() *store.Options {
	return &store.Options{PendingTimeout: PendingTimeout, Now: e.Clock.Now}
}

// expireLeases moves the Env's clock past every lease taken so far, as if
// the attempts holding them had died long ago.
func (e *Env) expireLeases() { e.Clock.Advance(2 * PendingTimeout) }

// Run runs the whole suite against h as subtests <h.Name>/<mode>/<case>.
func Run(t *testing.T, h Harness) {
	t.Helper()
	RunCases(t, h, append(Cases(), h.Cases...)...)
}

// RunCases runs only the given cases against h, in both modes, as subtests
// <h.Name>/<mode>/<case>. Suites of their own (a framework adapter's
// end-to-end run, say) use it to run on every backend's harness with the
// suite's Env.
func RunCases(t *testing.T, h Harness, cases ...Case) {
	t.Helper()
	if h.Writers == 0 {
		h.Writers = 8
	}
	if h.Appends == 0 {
		h.Appends = 25
	}
	t.Run(h.Name, func(t *testing.T) {
		for _, mode := range []string{modeFull, modePrimitives} {
			t.Run(mode, func(t *testing.T) {
				for _, c := range cases {
					t.Run(c.Name, func(t *testing.T) {
						if h.Parallel {
							t.Parallel()
						}
						c.Run(t, newEnv(t, &h, mode))
					})
				}
			})
		}
	})
}

func newEnv(t *testing.T, h *Harness, mode string) *Env {
	raw := h.NewDriver(t)
	d := raw
	if mode == modePrimitives {
		d = Primitives(raw)
	}
	e := &Env{Driver: d, Raw: raw, Mode: mode, Clock: &Clock{}, h: h}
	e.Store = store.New(d, e.Options())
	t.Cleanup(func() { _ = e.Store.Close() })
	return e
}

// ctx returns the test's context.
func ctx(t *testing.T) context.Context { return t.Context() }
