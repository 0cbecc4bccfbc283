// Observation: the Observer hook told as each operation begins and ends and
// each time a pending receipt is settled.

package store

import "context"

// Observer watches a Store's operations and settlements, for tracing and
// metrics (the otel module implements it with OpenTelemetry). Give it to
// [Options.Observer]; with none the store calls nothing and pays nothing.
//
// Its methods are called on the caller's goroutine (for [OpIndex], the
// background indexer's), concurrently for concurrent operations, and must
// not block: they run inside every store call. They are given no content,
// query or path, except in the text of [OperationResult.Err].
type Observer interface {
	// ObserveOperation is called as a public operation of the Store begins
	// (before any validation). The context it returns is the operation's:
	// every driver call the operation makes runs under it, so a span
	// started here is their parent. The store calls end exactly once, when
	// the operation returns (for Walk, when the iteration stops), with its
	// result. A nil context means ctx; a nil end is not called.
	ObserveOperation(ctx context.Context, op OperationInfo) (_ context.Context, end func(OperationResult))
	// ObserveSettlement is called each time the store settles a pending
	// receipt left by an attempt that crashed, lost its reply or is still
	// in flight (found by a replay, or on a row the next mutation of the
	// path overwrites), with how it ended. ctx is the context of the
	// operation that settled it.
	ObserveSettlement(ctx context.Context, s Settlement)
}

// Op names a public operation of the Store, as [Observer] sees it.
type Op string

// The operations an [Observer] sees: the Store methods of the same name.
const (
	OpRead         Op = "Read"
	OpListPaths    Op = "ListPaths"
	OpWalk         Op = "Walk"
	OpSearch       Op = "Search"
	OpWrite        Op = "Write"
	OpDelete       Op = "Delete"
	OpGetOperation Op = "GetOperation"
	OpPruneExpired Op = "PruneExpired"
	OpReadAndList  Op = "ReadAndList"
	OpNamespaces   Op = "Namespaces"
	// History operations: Store.History, Store.ReadVersion and
	// Store.ForgetHistory (a Restore is seen as the Read of its version
	// and the Write it makes).
	OpHistory       Op = "History"
	OpReadVersion   Op = "ReadVersion"
	OpForgetHistory Op = "ForgetHistory"
	// OpIndex is the store's own background work on its search indexes:
	// one job of the embedding indexer (Options.Embedder: re-embedding
	// one file's changed chunks), or the term index's work (bringing a
	// folder's index up to date with changes, building it, checking it
	// against the store; its count is the files it read). It runs under
	// a context of the store's own, never a request's, so a span started
	// for it is a root; an indexer job carries the write or search that
	// queued its file only as a link (background.Origin), which a tracer
	// makes a link of that root.
	OpIndex Op = "Index"
)

// OperationInfo describes an operation as it begins.
type OperationInfo struct {
	// Op is the operation.
	Op Op
	// Create reports a Write that expects the path to be absent (Expected
	// ""): a new file, unless it is refused or replayed.
	Create bool
	// Tracked reports a Write or Delete that carries an Operation (an
	// idempotency key), so that it may be a replay.
	Tracked bool
}

// The outcomes of an operation ([OperationResult.Outcome]) besides the
// kind of its error.
const (
	// OutcomeOK is an operation that succeeded (a Delete of an absent path
	// included).
	OutcomeOK = "ok"
	// OutcomeReplayed is a Write or Delete answered from its operation's
	// receipt (nothing was applied by this call), or a GetOperation that
	// found the operation's result.
	OutcomeReplayed = "replayed"
)

// OperationResult is how an operation ended.
type OperationResult struct {
	// Outcome is OutcomeOK, OutcomeReplayed, or on failure the error's
	// kind, [ErrorKind]: "not_found", "conflict", "operation_conflict",
	// "invalid_path", "canceled", …, or the Go type of a backend error.
	Outcome string
	// Err is the error the operation returned, nil on success. Its text
	// may name a path: an observer that exports it discloses paths.
	Err error
	// Count is the number of records the operation returned or removed:
	// the paths of ListPaths, the paths a Walk yielded, the matches of
	// Search, the rows of PruneExpired; 1 for a Read that found the file;
	// 0 otherwise.
	Count int
}

// Failed reports whether the operation failed. A Read of an absent file
// (Outcome "not_found") is a failure like any other: whether it is an
// error is the observer's call.
func (r OperationResult) Failed() bool { return r.Err != nil }

// Settlement is how the store settled a pending receipt.
type Settlement string

// The settlements an [Observer] sees.
const (
	// SettlementCompleted: the attempt had landed (the row carries its
	// version); its receipt was completed with its true result.
	SettlementCompleted Settlement = "completed"
	// SettlementRolledBack: the attempt had not landed; the row it was
	// conditioned on was fenced, so it never can, and its receipt was
	// dropped, so a replay applies it anew.
	SettlementRolledBack Settlement = "rolled_back"
	// SettlementGaveUp: the path kept changing while the store settled it;
	// the receipt stays pending (the caller got ErrConflict, and the
	// store's Logger a Warn record).
	SettlementGaveUp Settlement = "gave_up"
)

// observation is one observed operation; its zero value observes nothing.
type observation struct{ end func(OperationResult) }

// observe tells the observer, if any, that op begins, and returns the
// operation's context.
func (s *Store) observe(ctx context.Context, info OperationInfo) (context.Context, observation) {
	if s.observer == nil {
		return ctx, observation{}
	}
	octx, end := s.observer.ObserveOperation(ctx, info)
	if octx == nil {
		octx = ctx
	}
	return octx, observation{end: end}
}

// done reports the result of the operation: its error, whether it was a
// replay, and its count of records.
func (o observation) done(err error, replayed bool, count int) {
	if o.end == nil {
		return
	}
	r := OperationResult{Outcome: OutcomeOK, Err: err, Count: count}
	switch {
	case err != nil:
		r.Outcome = ErrorKind(err)
	case replayed:
		r.Outcome = OutcomeReplayed
	}
	o.end(r)
}

// settled tells the observer, if any, how a pending receipt was settled.
func (s *Store) settled(ctx context.Context, how Settlement) {
	if s.observer != nil {
		s.observer.ObserveSettlement(ctx, how)
	}
}

// observeWalk observes one iteration of a Walk: it returns the
// iteration's context, yield wrapped to count the paths and catch the
// error, and the function to call when the iteration stops.
func (s *Store) observeWalk(ctx context.Context, yield func(string, error) bool) (context.Context, func(string, error) bool, func()) {
	if s.observer == nil {
		return ctx, yield, func() {}
	}
	ctx, o := s.observe(ctx, OperationInfo{Op: OpWalk})
	var n int
	var err error
	counted := func(path string, e error) bool {
		if e != nil {
			err = e
		} else {
			n++
		}
		return yield(path, e)
	}
	return ctx, counted, func() { o.done(err, false, n) }
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
