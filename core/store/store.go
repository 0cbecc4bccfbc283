// The Store: its options, its construction over a driver (discovering the
// optional interfaces), its capabilities, Shutdown and Close.

package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
)

// Default option values.
const (
	DefaultReceiptRetention = 7 * 24 * time.Hour
	DefaultPendingTimeout   = 15 * time.Second
	// MaxOperationIDChars bounds Operation.ID and Operation.Fingerprint.
	MaxOperationIDChars = 512
	// CloseTimeout bounds the time [Store.Close] lets the background
	// indexer finish its queue ([Store.Shutdown] takes a deadline of its
	// own).
	CloseTimeout = 5 * time.Second
)

// Options configures a Store. The zero value (or nil) means defaults.
type Options struct {
	// ReceiptRetention is how long operation receipts (and delete
	// tombstones) are kept; a replay after that applies the mutation anew.
	// Default 7 days.
	ReceiptRetention time.Duration
	// PendingTimeout is how long a replay waits for a concurrent attempt
	// of the same operation to finish before settling it as crashed
	// (primitive path only). Default 15 s.
	PendingTimeout time.Duration
	// Now returns the current time; default time.Now. For tests.
	Now func() time.Time
	// Logger receives a Warn record for each failure the store swallows by
	// design, so that none goes unseen: a receipt that could not be
	// completed or dropped after its change (it stays pending until a
	// replay or the next write of the path settles it), a delete's
	// tombstone that could not be removed (it expires), a settlement that
	// gave up on a path that kept changing. nil means [slog.Default].
	// Nothing else is logged. A record carries the error's kind
	// ([ErrorKind]) and a hash of the operation id; never content, paths,
	// operation ids or error text, unless LogDetails is set.
	Logger *slog.Logger
	// LogDetails adds the path, the operation id and the error text to the
	// Logger's records. They may name other tenants' files: set it only
	// where logs are as private as the store.
	LogDetails bool
	// Observer, when set, is told as each operation begins and ends and
	// each time a pending receipt is settled: the hook for tracing and
	// metrics (the otel module's NewObserver). nil means none, at no cost.
	Observer Observer
	// History, when set, records every successful write and delete in the
	// file's history (see Store.History) for its retention. The entry is
	// written in the same atomic request or transaction as the change on
	// backends with one; over the nine primitives every change then goes
	// through the receipt algorithm, so that a crash never leaves a change
	// without its entry or an entry without its change. It requires a
	// driver that keeps history (driver.Historian; every agentmem backend
	// does): otherwise every write and delete fails with
	// ErrHistoryUnsupported. nil means no history.
	History *HistoryOptions
	// Embedder, when set, turns on hybrid search: [Store.Search] fuses BM25
	// with the cosine of the query's vector and the vectors of the files'
	// chunks, and that becomes the default mode ([search.Hybrid]). After
	// each write, append or delete that lands, a background queue (its
	// worker started by New, drained by [Store.Shutdown] within its
	// deadline and by Close within [CloseTimeout]) re-embeds the file's
	// changed chunks and keeps their vectors, stamped with the chunk's
	// hash and the model id, in the file's folder (see [search.IndexSegment]); it
	// never slows or fails the write, and a search embeds, within its
	// bounds, the chunks the index lacks (a file changed by another
	// process, or one the queue left at shutdown, say). Each indexing job
	// runs under a context of its own, never the request's, and the
	// [Observer] sees it as an [OpIndex] operation. nil means BM25 only.
	Embedder search.Embedder
	// SearchRecencyHalfLife is the half-life a search weighs recent files
	// by when its request names none (search.Request.RecencyHalfLife 0):
	// 0, the default, leaves recency off. The store URL's recency
	// parameter ([RecencyParam]) sets it. Negative is treated as 0.
	SearchRecencyHalfLife time.Duration
}

// Store is the portable memory store. It is safe for concurrent use.
type Store struct {
	d        driver.Driver
	mutator  driver.Mutator
	collide  bool // the mutator refuses colliding creates itself
	appender driver.Appender
	batch    driver.BatchGetter
	scope    driver.ScopeReader
	snap     driver.SnapshotReader
	pruner   driver.Pruner
	// historian keeps the history; historyRetention > 0 turns recording on.
	historian        driver.Historian
	historyRetention time.Duration

	retention time.Duration
	pending   time.Duration
	now       func() time.Time
	recency   time.Duration // Options.SearchRecencyHalfLife

	logger     *slog.Logger
	logDetails bool
	observer   Observer

	search *search.Engine // search and its indexes, kept by the change feed (feed.go)

	mu           sync.Mutex
	completed    map[string]struct{} // versions whose receipts this store saw settled
	closeOnce    sync.Once
	closeErr     error
	closeTimeout time.Duration // Close's bound on draining the indexer (CloseTimeout; tests shorten it)
}

// New returns a Store over d. Optional driver interfaces are discovered by
// type assertion. The Store owns d: Shutdown and Close close it. With an
// [Options.Embedder], New starts the background indexer; stop it with
// Shutdown or Close. With a nil d every method fails with ErrNoDriver.
func New(d driver.Driver, opts *Options) *Store {
	s := &Store{d: d, retention: DefaultReceiptRetention, pending: DefaultPendingTimeout, now: time.Now, closeTimeout: CloseTimeout}
	if opts != nil {
		if opts.ReceiptRetention > 0 {
			s.retention = opts.ReceiptRetention
		}
		if opts.PendingTimeout > 0 {
			s.pending = opts.PendingTimeout
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
		s.recency = max(0, opts.SearchRecencyHalfLife)
		s.logger, s.logDetails = opts.Logger, opts.LogDetails
		s.observer = opts.Observer
		if h := opts.History; h != nil {
			s.historyRetention = h.Retention
			if s.historyRetention <= 0 {
				s.historyRetention = DefaultHistoryRetention
			}
		}
	}
	so := &search.Options{Now: s.now}
	if opts != nil {
		so.Embedder = opts.Embedder
	}
	if d == nil {
		s.search = search.New(searchHost{s}, nil, so)
		return s
	}
	c := driver.CapabilitiesOf(d)
	if c.AtomicMutation {
		s.mutator = d.(driver.Mutator)
		s.collide = c.AtomicCollision
	}
	if c.Append {
		s.appender = d.(driver.Appender)
	}
	if c.BatchGet {
		s.batch = d.(driver.BatchGetter)
	}
	if c.ScopeRead {
		s.scope = d.(driver.ScopeReader)
	}
	if c.Snapshot {
		s.snap = d.(driver.SnapshotReader)
	}
	if c.Prune {
		s.pruner = d.(driver.Pruner)
	}
	if c.History {
		s.historian = d.(driver.Historian)
	}
	s.search = search.New(searchHost{s}, d, so)
	return s
}

// Capabilities reports the optional driver interfaces in use.
func (s *Store) Capabilities() Capabilities {
	return Capabilities{
		AtomicMutation:  s.mutator != nil,
		AtomicCollision: s.collide,
		BatchGet:        s.batch != nil,
		ScopeRead:       s.scope != nil,
		Snapshot:        s.snap != nil,
		Prune:           s.pruner != nil,
		Append:          s.appender != nil,
		History:         s.historian != nil,
	}
}

// Driver returns the driver the store runs on.
func (s *Store) Driver() driver.Driver { return s.d }

// Now returns the time by the store's clock (Options.Now): the clock its
// expiry checks use, so an expiry given relative to "now" should start
// from it.
func (s *Store) Now() time.Time {
	if s == nil || s.now == nil {
		return time.Now()
	}
	return s.now()
}

// Backend returns the backend's name for telemetry and logs
// ([driver.Name]: "sqlite", "postgres", …; a wrapped driver names the
// backend it wraps), or "" when the store has no driver (store.New with
// nil: every other method fails with [ErrNoDriver]).
func (s *Store) Backend() string { return driver.Name(s.d) }

// Shutdown stops the store gracefully: the term index writes the changes
// it has not persisted yet (until ctx is done), then its background work
// stops (the next store finds what it had not written by checking the
// folders it loads); the
// background indexer (Options.Embedder) queues nothing more and indexes
// what is queued (without retrying failures) until ctx is done; then the
// job in flight is canceled, and the rest is left to the searches, which
// embed, within their bounds, what the index lacks: nothing is lost. Then
// Shutdown closes the driver. It returns by
// ctx's deadline, give or take the driver call in flight seeing its context
// canceled (an embedder that ignores its context is not waited for); the
// error wraps ctx's (errors.Is finds context.DeadlineExceeded) when the
// queue was cut, and the driver's Close error. Later calls, of Shutdown
// or Close, return the first result. Errors: ErrNoDriver;
// [ErrNilArgument] for a nil ctx.
func (s *Store) Shutdown(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("agentmem: pass a context to Shutdown, not nil: %w", ErrNilArgument)
	}
	return s.shutdown(ctx)
}

// Close is [Store.Shutdown] with a deadline of [CloseTimeout]: it lets
// the term index write its changes and the background indexer finish its
// queue, together for at most that long, then closes the driver. It never waits longer (give or take the driver call
// in flight), whatever the embedder does. Later calls return the first
// result.
func (s *Store) Close() error {
	return s.shutdown(nil)
}

// shutdown stops the indexer within ctx (nil: within s.closeTimeout), then
// closes the driver, once.
func (s *Store) shutdown(ctx context.Context) error {
	if s.d == nil {
		return ErrNoDriver
	}
	s.closeOnce.Do(func() {
		// One deadline for Close: the term index's writes, then the
		// indexer's queue.
		err := s.search.Close(ctx, time.Now().Add(s.closeTimeout))
		cerr := s.d.Close()
		switch {
		case err == nil:
			s.closeErr = cerr
		case cerr == nil:
			s.closeErr = fmt.Errorf("agentmem: indexing stopped at the deadline; searches embed what it left: %w", err)
		default:
			s.closeErr = errors.Join(fmt.Errorf("agentmem: indexing stopped at the deadline; searches embed what it left: %w", err), cerr)
		}
	})
	return s.closeErr
}

// usable reports why the store cannot serve a call now: no driver
// (ErrNoDriver), or ctx is done.
func (s *Store) usable(ctx context.Context) error {
	if s.d == nil {
		return ErrNoDriver
	}
	return ctx.Err()
}

// PruneExpired deletes every file that has expired (WriteRequest.ExpiresAt),
// recording each as a delete by ExpiryUpdatedBy, then removes expired
// receipts, tombstones and history entries on backends without a native
// TTL (on the others their TTL attribute does that), and returns how many
// files and rows it removed. Expired files are hidden from every read at
// once whether or not it runs: it reclaims their space and completes
// their history. It lists the whole store, so run it as a periodic job.
func (s *Store) PruneExpired(ctx context.Context) (n int, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpPruneExpired})
	defer func() { o.done(err, false, n) }()
	if s.d == nil {
		return 0, ErrNoDriver
	}
	if n, err = s.expireUnder(ctx, ""); err != nil || s.pruner == nil {
		return n, err
	}
	rows, err := s.pruner.PruneExpired(ctx, s.now())
	return n + rows, err
}
