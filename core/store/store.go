package store

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Default option values.
const (
	DefaultReceiptRetention = 7 * 24 * time.Hour
	DefaultPendingTimeout   = 15 * time.Second
	// MaxOperationIDChars bounds Operation.ID and Operation.Fingerprint.
	MaxOperationIDChars = 512
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
	// chunks, and that becomes the default mode ([SearchHybrid]). After
	// each write, append or delete that lands, a background queue (started
	// on first use, drained by Close) re-embeds the file's changed chunks
	// and keeps their vectors, stamped with the chunk's hash and the
	// model id, in the file's folder (see [IndexSegment]); it never slows
	// or fails the write, and a search embeds, within its bounds, the
	// chunks the index lacks (a file changed by another process, say).
	// nil means BM25 only.
	Embedder Embedder
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

	logger     *slog.Logger
	logDetails bool
	observer   Observer

	embedder Embedder
	ix       *indexer
	cache    analysisCache // searches' analysis of what they read

	mu        sync.Mutex
	completed map[string]struct{} // versions whose receipts this store saw settled
	closeOnce sync.Once
	closeErr  error
}

// New returns a Store over d. Optional driver interfaces are discovered by
// type assertion. The Store owns d: Close closes it. With a nil d every
// method fails with ErrNoDriver.
func New(d driver.Driver, opts *Options) *Store {
	s := &Store{d: d, retention: DefaultReceiptRetention, pending: DefaultPendingTimeout, now: time.Now}
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
		s.logger, s.logDetails = opts.Logger, opts.LogDetails
		s.observer = opts.Observer
		if opts.Embedder != nil {
			s.embedder, s.ix = opts.Embedder, newIndexer()
		}
		if h := opts.History; h != nil {
			s.historyRetention = h.Retention
			if s.historyRetention <= 0 {
				s.historyRetention = DefaultHistoryRetention
			}
		}
	}
	if d == nil {
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

// Close finishes the indexing queued so far (without retrying failures;
// a search repairs what is left), then closes the driver. Later calls
// return the first result.
func (s *Store) Close() error {
	if s.d == nil {
		return ErrNoDriver
	}
	s.closeOnce.Do(func() {
		s.stopIndexer()
		s.closeErr = s.d.Close()
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

// Read returns at most maxChars runes of the file at path, with the version
// of the whole file. It fails with ErrNotFound when the file is absent,
// ErrInvalidPath for a bad path and ErrInvalidBound when maxChars <= 0.
func (s *Store) Read(ctx context.Context, path string, maxChars int) (_ *File, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpRead})
	defer func() { o.done(err, false, boolInt(err == nil)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if maxChars <= 0 {
		return nil, fmt.Errorf("%w: max_chars must be positive, got %d", ErrInvalidBound, maxChars)
	}
	f, err := s.d.GetFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if f == nil || f.Tombstone {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, path)
	}
	return fileOf(path, f, maxChars), nil
}

// fileOf is what a read of row f at path returns: at most maxChars runes.
func fileOf(path string, f *driver.File, maxChars int) *File {
	content, truncated := cutRunes(f.Content, maxChars)
	return &File{
		Path:        path,
		Content:     content,
		Version:     f.Version,
		OperationID: shownOperation(f.OperationID),
		Truncated:   truncated,
		Metadata:    maps.Clone(f.Metadata),
	}
}

// ListPaths returns the limit smallest paths (code-point order) that start
// with prefix, a plain string prefix: "tenant" also matches "tenant-b/x".
// Nested paths are included. It fails with ErrInvalidPath or
// ErrInvalidBound.
func (s *Store) ListPaths(ctx context.Context, prefix string, limit int) (paths []string, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpListPaths})
	defer func() { o.done(err, false, len(paths)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidBound, limit)
	}
	return s.list(ctx, prefix, limit, false)
}

// list pages through the driver, skipping tombstones (and nested paths when
// direct is set), until limit paths are found or the prefix is exhausted.
// A direct listing whose page ends inside a nested folder starts the next
// page after that folder's whole range, so it never pages through a
// folder's files only to throw them away.
func (s *Store) list(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	return s.listFrom(ctx, prefix, limit, direct, nil)
}

// listFrom is list with its first page (asked with After "" and Limit
// limit) already read when first is non-nil.
func (s *Store) listFrom(ctx context.Context, prefix string, limit int, direct bool, first *[]driver.Entry) ([]string, error) {
	var out []string
	after := ""
	for len(out) < limit {
		page := limit - len(out)
		var entries []driver.Entry
		if first != nil {
			entries, first = *first, nil
		} else {
			var err error
			if entries, err = s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: page}); err != nil {
				return nil, err
			}
		}
		skip := ""
		for _, e := range entries {
			if end, ok := reservedAt(e.Path); ok {
				skip = max(skip, end) // the store's derived rows are never files
				continue
			}
			if e.Tombstone || (direct && !directlyUnder(e.Path, prefix)) {
				continue
			}
			out = append(out, e.Path)
		}
		if len(entries) < page {
			break
		}
		after = entries[len(entries)-1].Path
		if direct {
			after = pastFolder(after, prefix)
		}
		after = max(after, skip)
	}
	return out, nil
}

// Write stores r.Content at r.Path if the path's version is r.Expected
// ("" = absent). With r.Operation it is exactly-once: a known operation
// returns its original result with Replayed set and writes nothing.
//
// A create (Expected "") is refused with ErrPathCollision when a file lies
// on the path's way or below it; see the package doc for what that costs.
//
// Errors: ErrInvalidPath, ErrInvalidContent, ErrInvalidMetadata, ErrInvalidOperation,
// ErrPathCollision, ErrOperationConflict (checked before the version), ErrConflict,
// ErrTooLarge, or the backend's error (the outcome is then settled by a
// later replay or mutation of the path).
func (s *Store) Write(ctx context.Context, r WriteRequest) (m Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpWrite, Create: r.Expected == "", Tracked: r.Operation != nil})
	defer func() { o.done(err, m.Replayed, 0); s.indexAfter(ctx, r.Path, m, err) }()
	if s.d == nil {
		return Mutation{}, ErrNoDriver
	}
	if err := ValidatePath(r.Path); err != nil {
		return Mutation{}, err
	}
	if !utf8.ValidString(r.Content) {
		return Mutation{}, ErrInvalidContent
	}
	meta, err := normalizeMetadata(r.Metadata)
	if err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	return s.mutate(ctx, change{kind: driver.KindWrite, path: r.Path, content: r.Content, meta: meta, expected: r.Expected, op: r.Operation})
}

// Delete removes r.Path if its version is r.Expected. Deleting an absent
// path with Expected "" succeeds with Existed false. With r.Operation it is
// exactly-once. Errors as for Write.
func (s *Store) Delete(ctx context.Context, r DeleteRequest) (m Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpDelete, Tracked: r.Operation != nil})
	defer func() { o.done(err, m.Replayed, 0); s.indexAfter(ctx, r.Path, m, err) }()
	if s.d == nil {
		return Mutation{}, ErrNoDriver
	}
	if err := ValidatePath(r.Path); err != nil {
		return Mutation{}, err
	}
	meta, err := normalizeMetadata(r.Metadata)
	if err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	return s.mutate(ctx, change{kind: driver.KindDelete, path: r.Path, expected: r.Expected, op: r.Operation, meta: meta})
}

// GetOperation returns the recorded result of op, with Replayed set, or nil
// when op is unknown (or was attempted but never landed, which it settles).
// A known id with another fingerprint is ErrOperationConflict.
func (s *Store) GetOperation(ctx context.Context, op Operation) (m *Mutation, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpGetOperation})
	defer func() { o.done(err, m != nil, boolInt(m != nil)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := validateOperation(&op); err != nil {
		return nil, err
	}
	r, err := s.d.GetReceipt(ctx, op.ID)
	if err != nil || r == nil {
		return nil, err
	}
	if r.Fingerprint != op.Fingerprint {
		return nil, fmt.Errorf("%w: operation %q", ErrOperationConflict, op.ID)
	}
	if !r.Completed {
		if r, _, err = s.settle(ctx, r, true); err != nil || r == nil {
			return nil, err
		}
	}
	res := replay(r)
	return &res, nil
}

// PruneExpired removes expired receipts and tombstones on backends without
// a native TTL and returns how many rows it removed; on other backends it
// does nothing and returns 0 (their TTL attribute does the work).
func (s *Store) PruneExpired(ctx context.Context) (n int, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpPruneExpired})
	defer func() { o.done(err, false, n) }()
	if s.d == nil {
		return 0, ErrNoDriver
	}
	if s.pruner == nil {
		return 0, nil
	}
	return s.pruner.PruneExpired(ctx, s.now())
}

func validateOperation(op *Operation) error {
	if op == nil {
		return nil
	}
	for _, f := range [...]struct{ name, v string }{{"id", op.ID}, {"fingerprint", op.Fingerprint}} {
		name, v := f.name, f.v
		if v == "" || utf8.RuneCountInString(v) > MaxOperationIDChars || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return fmt.Errorf("%w: %s must be 1-%d chars of valid UTF-8 without NUL", ErrInvalidOperation, name, MaxOperationIDChars)
		}
	}
	return nil
}
