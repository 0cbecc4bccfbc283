// History: the hooks the write paths call to record a change (historyEntry,
// recordHistory…, completeHistory, dropHistory), and the reads and changes of
// what is recorded (History, ReadVersion, Restore, ForgetHistory).

package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// DefaultHistoryRetention is how long history entries are kept when
// HistoryOptions.Retention is zero.
const DefaultHistoryRetention = 30 * 24 * time.Hour

// HistoryOptions turns a store's change history on (Options.History).
type HistoryOptions struct {
	// Retention is how long an entry is kept after its change; default
	// DefaultHistoryRetention (30 days). Expired entries are hidden at
	// once and removed by the backend's TTL or by PruneExpired.
	Retention time.Duration
}

// RestoredFromKey is the metadata key Restore adds to the write it makes:
// the version whose content it restored.
const RestoredFromKey = "restored_from"

// HistoryEntry is one recorded change of a file, as [Store.History] and
// [Store.ReadVersion] return it.
type HistoryEntry struct {
	// Path is the file changed.
	Path string
	// Version is the version the change made. For a delete it is an id of
	// the delete that no file ever carries.
	Version string
	// Previous is the version the change replaced, "" when the file was
	// absent.
	Previous string
	// Deleted reports a delete: Content is then empty.
	Deleted bool
	// OperationID is the id of the operation that made the change, or ""
	// (or an id the store made up, on backends without atomic writes).
	OperationID string
	// Metadata is the change's metadata (the write's, or the delete's),
	// nil for none.
	Metadata map[string]string
	// ExpiresAt is the expiry the write gave the file (see
	// [WriteRequest]); zero for none.
	ExpiresAt time.Time
	// Pinned reports that the write pinned the file.
	Pinned bool
	// Content is the whole content the write stored. The content a change
	// replaced is the content of the entry of its Previous version.
	Content string
	// Time is when the change was made (zero for a current version written
	// while history was off, see ReadVersion).
	Time time.Time
}

// HistoryRequest selects a page of history.
type HistoryRequest struct {
	// Path selects one file's history. When empty, Prefix selects the
	// history of every file whose path starts with it (a user's or a
	// namespace's audit).
	Path string
	// Prefix is a path prefix, as for ListPaths; used when Path is "".
	Prefix string
	// After is the Next of the previous page; "" starts at the beginning.
	After string
	// Limit bounds the number of entries returned (> 0).
	Limit int
}

// HistoryPage is one page of [Store.History].
type HistoryPage struct {
	// Entries are ordered by path, then newest first.
	Entries []HistoryEntry
	// Next, when not empty, is the After of the next page.
	Next string
}

// RestoreRequest is one restore of a past version.
type RestoreRequest struct {
	// Path is the file to restore.
	Path string
	// Version is the past version whose content to write back (a write's
	// version from History).
	Version string
	// Expected is the version the file must have now, as for a write (""
	// = absent, after a delete): the restore is a compare-and-swap, so a
	// change made since the caller looked is never overwritten.
	Expected string
	// Operation, when non-nil, makes the restore exactly-once.
	Operation *Operation
	// Metadata is stored with the restored content (who restored it);
	// Restore adds RestoredFromKey.
	Metadata map[string]string
}

// HistoryRetention is how long the store keeps the history of each change
// it makes (Options.History, the store URL's ?history=): 0 when it records
// none, because history is off or because the backend keeps none
// (Capabilities().History is false). History still reads what a backend
// keeps when it is 0.
func (s *Store) HistoryRetention() time.Duration {
	if s == nil || s.historian == nil {
		return 0
	}
	return s.historyRetention
}

// historyOn reports whether changes must be recorded, and fails when
// history is on but the driver keeps none.
func (s *Store) historyOn() (bool, error) {
	if s.historyRetention == 0 {
		return false, nil
	}
	if s.historian == nil {
		return false, ErrHistoryUnsupported
	}
	return true, nil
}

// historyEntry is the entry recording c, which makes version at now.
func (s *Store) historyEntry(c change, version string, now time.Time) *driver.HistoryEntry {
	e := &driver.HistoryEntry{
		Path:      c.path,
		Version:   version,
		Previous:  unfenced(c.expected),
		Kind:      c.kind,
		Metadata:  c.meta,
		Time:      now,
		ExpiresAt: now.Add(s.historyRetention),
	}
	if c.op != nil && !c.madeUp {
		e.OperationID = c.op.ID
	}
	if c.kind == driver.KindWrite {
		e.Content = c.content
	}
	return e
}

// completeHistory marks the entry of a change that landed as complete
// and reports whether there was none (history was off for it, or a
// ForgetHistory removed it meanwhile). A store that records no history
// does so only with settling set: when it has just settled the change's
// receipt, since the change may come from a store that records it.
func (s *Store) completeHistory(ctx context.Context, path, version string, settling bool) (missing bool, err error) {
	if s.historian == nil || s.historyRetention == 0 && !settling {
		return false, nil
	}
	err = s.historian.CompleteHistory(ctx, path, version)
	if isPrecondition(err) {
		return true, nil
	}
	return false, err
}

// dropHistory removes the pending entry of a change that did not land
// (any store's: settlements of a store that records no history drop them
// too).
func (s *Store) dropHistory(ctx context.Context, path, version string) error {
	if s.historian == nil {
		return nil
	}
	if err := s.historian.DropHistory(ctx, path, version); err != nil && !isPrecondition(err) {
		return err
	}
	return nil
}

// recordHistoryPending records the pending entry of tracked change c, made
// by the attempt holding rec, before the change is applied.
func (s *Store) recordHistoryPending(ctx context.Context, c change, rec driver.Receipt) error {
	e := s.historyEntry(c, rec.Version, rec.CreatedAt)
	e.Pending = true
	if err := s.historian.PutHistory(ctx, *e); err != nil {
		return errHistoryEntry(c.path, err)
	}
	return nil
}

// recordHistoryLanded completes the entry of tracked change c, which landed
// with the version of rec, and records it again when a ForgetHistory
// removed it while the change was in flight (the change landed after it).
func (s *Store) recordHistoryLanded(ctx context.Context, c change, rec driver.Receipt) error {
	missing, err := s.completeHistory(ctx, c.path, rec.Version, false)
	if err == nil && missing && c.recorded() {
		err = s.historian.PutHistory(ctx, *s.historyEntry(c, rec.Version, rec.CreatedAt))
		if isPrecondition(err) {
			err = nil
		}
	}
	return err
}

// errHistoryEntry reports a pending entry that could not be recorded.
func errHistoryEntry(path string, err error) error {
	if errors.Is(err, driver.ErrPrecondition) {
		return fmt.Errorf("agentmem: recording the history of %q: an entry with this version exists: %w", path, err)
	}
	return err
}

// History returns a page of recorded changes: of the file r.Path, or of
// every file under r.Prefix, ordered by path and then newest first. It
// reads what the backend keeps whether or not this store records history
// (Options.History). Pending entries left by an attempt that crashed are
// settled first: an entry is shown only for a change that landed. A file
// whose newest entry is a write that has expired since (see
// WriteRequest.ExpiresAt) has its expiry recorded first, so the history
// shows it.
//
// Errors: ErrInvalidPath, ErrInvalidBound, ErrHistoryUnsupported (the
// backend keeps no history), or the backend's error.
func (s *Store) History(ctx context.Context, r HistoryRequest) (page HistoryPage, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpHistory})
	defer func() { o.done(err, false, len(page.Entries)) }()
	if err := s.usable(ctx); err != nil {
		return HistoryPage{}, err
	}
	prefix := r.Prefix
	if r.Path != "" {
		if err := ValidatePath(r.Path); err != nil {
			return HistoryPage{}, err
		}
		prefix = r.Path + " "
	} else if err := ValidatePrefix(r.Prefix); err != nil {
		return HistoryPage{}, err
	}
	if r.Limit <= 0 {
		return HistoryPage{}, fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidBound, r.Limit)
	}
	if r.After != "" && !strings.HasPrefix(r.After, prefix) {
		return HistoryPage{}, fmt.Errorf("%w: after %q is not a Next of this history", ErrInvalidBound, r.After)
	}
	if s.historian == nil {
		return HistoryPage{}, ErrHistoryUnsupported
	}
	now := s.now()
	after := r.After
	for len(page.Entries) < r.Limit {
		want := r.Limit - len(page.Entries)
		entries, err := s.historian.ListHistory(ctx, driver.HistoryParams{Prefix: prefix, After: after, Limit: want})
		if err != nil {
			return HistoryPage{}, err
		}
		// The history is complete: a file whose newest entry is a write
		// that has expired has its expiry recorded (a delete by
		// ExpiryUpdatedBy) before the page is shown, and the page is read
		// again. It costs nothing while no entry shown has expired.
		if due, err := s.recordDue(ctx, entries, after, now); err != nil {
			return HistoryPage{}, err
		} else if due {
			if entries, err = s.historian.ListHistory(ctx, driver.HistoryParams{Prefix: prefix, After: after, Limit: want}); err != nil {
				return HistoryPage{}, err
			}
		}
		for i := range entries {
			e := &entries[i]
			after = e.Key()
			ok, err := s.visible(ctx, e, now)
			if err != nil {
				return HistoryPage{}, err
			}
			if ok {
				page.Entries = append(page.Entries, historyEntryOf(e))
			}
		}
		if len(entries) < want {
			return page, nil
		}
	}
	page.Next = after
	return page, nil
}

// recordDue records the expiry of each file whose newest entry in entries
// (listed after the key after) is a write whose expiry has passed, and
// reports whether it recorded any. An entry is a file's newest when it is
// the first of its path and the listing did not start inside that path.
func (s *Store) recordDue(ctx context.Context, entries []driver.HistoryEntry, after string, now time.Time) (bool, error) {
	due := false
	prev, _, _ := strings.Cut(after, " ")
	for i := range entries {
		e := &entries[i]
		first := e.Path != prev
		prev = e.Path
		if !first || e.Kind != driver.KindWrite || !driver.LifetimeOf(e.Metadata).ExpiredAt(now) {
			continue
		}
		ok, err := s.expireAt(ctx, e.Path)
		if err != nil {
			return false, err
		}
		due = due || ok
	}
	return due, nil
}

// visible reports whether entry e stands for a change that landed and has
// not expired, settling it when it is pending.
func (s *Store) visible(ctx context.Context, e *driver.HistoryEntry, now time.Time) (bool, error) {
	if !e.ExpiresAt.IsZero() && e.ExpiresAt.Before(now) {
		return false, nil
	}
	if !e.Pending {
		return true, nil
	}
	return s.confirmHistory(ctx, e)
}

// historyEntryOf converts a driver entry.
func historyEntryOf(e *driver.HistoryEntry) HistoryEntry {
	meta, expires, pinned := userMetadata(e.Metadata)
	return HistoryEntry{
		ExpiresAt:   expires,
		Pinned:      pinned,
		Path:        e.Path,
		Version:     e.Version,
		Previous:    unfenced(e.Previous), // an Appender names the row it replaced, fence or not
		Deleted:     e.Kind == driver.KindDelete,
		OperationID: shownOperation(e.OperationID),
		Metadata:    meta,
		Content:     e.Content,
		Time:        e.Time,
	}
}

// ReadVersion returns the change of path that made version: a past
// version's whole content from the history, or the current file when
// version is its version (even one written while history was off; Time
// is then zero). It fails with ErrNotFound when neither has it (never
// recorded, expired, or an attempt that did not land).
func (s *Store) ReadVersion(ctx context.Context, path, version string) (_ *HistoryEntry, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpReadVersion})
	defer func() { o.done(err, false, boolInt(err == nil)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if version == "" {
		return nil, fmt.Errorf("%w: a version is required", ErrNotFound)
	}
	if s.historian != nil {
		e, err := s.historian.GetHistory(ctx, path, version)
		if err != nil {
			return nil, err
		}
		if e != nil {
			ok, err := s.visible(ctx, e, s.now())
			if err != nil {
				return nil, err
			}
			if ok {
				h := historyEntryOf(e)
				return &h, nil
			}
		}
	}
	f, err := s.d.GetFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if !s.live(f) || f.Version != version {
		if s.historian == nil {
			return nil, fmt.Errorf("%w: version %q of %q (this backend keeps no history): %w", ErrNotFound, version, path, ErrHistoryUnsupported)
		}
		return nil, fmt.Errorf("%w: version %q of %q", ErrNotFound, version, path)
	}
	meta, expires, pinned := userMetadata(f.Metadata)
	return &HistoryEntry{Path: path, Version: f.Version, OperationID: shownOperation(f.OperationID), Metadata: meta,
		ExpiresAt: expires, Pinned: pinned, Content: f.Content}, nil
}

// Restore writes the content of a past version of r.Path back, as a
// compare-and-swap over r.Expected, exactly once with r.Operation. The
// write is recorded like any other (with RestoredFromKey in its
// metadata), so a restore can itself be undone. The restored file keeps
// the version's pin and never expires; an expired file counts as absent
// (Expected "").
//
// Errors: those of ReadVersion for r.Version (ErrNotFound), ErrNotFound
// wrapped with a hint when r.Version is a delete, then those of Write.
func (s *Store) Restore(ctx context.Context, r RestoreRequest) (m Mutation, err error) {
	if err := s.usable(ctx); err != nil {
		return Mutation{}, err
	}
	if err := validateOperation(r.Operation); err != nil {
		return Mutation{}, err
	}
	if r.Operation != nil {
		// A replay answers from the receipt, even after the version expired.
		if prev, err := s.GetOperation(ctx, *r.Operation); err != nil || prev != nil {
			if prev == nil {
				return Mutation{}, err
			}
			return *prev, nil
		}
	}
	v, err := s.ReadVersion(ctx, r.Path, r.Version)
	if err != nil {
		return Mutation{}, err
	}
	if v.Deleted {
		return Mutation{}, fmt.Errorf("%w: version %q of %q is a delete, which has no content; restore the version it replaced (%q)", ErrNotFound, r.Version, r.Path, v.Previous)
	}
	meta := maps.Clone(r.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[RestoredFromKey] = r.Version
	// The restored file keeps the version's pin, never its expiry (that
	// would hide it again, or at once).
	return s.Write(ctx, WriteRequest{Path: r.Path, Content: v.Content, Expected: r.Expected, Operation: r.Operation, Metadata: meta, Pinned: v.Pinned})
}

// ForgetHistory removes every history entry of the files whose path starts
// with prefix (a namespace's folder, "kamal/") and returns how many it
// removed. The files themselves are untouched: delete them first, since a
// change made meanwhile is recorded again (over the primitives, a change
// in flight while ForgetHistory runs puts its entry back when it lands). An empty prefix is refused
// (ErrInvalidPath), so a typo never erases every user's history.
func (s *Store) ForgetHistory(ctx context.Context, prefix string) (n int, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpForgetHistory})
	defer func() { o.done(err, false, n) }()
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, fmt.Errorf("%w: forget needs a non-empty prefix", ErrInvalidPath)
	}
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	if s.historian == nil {
		return 0, nil // nothing is kept
	}
	return s.historian.DeleteHistory(ctx, prefix)
}

// madeUpOperation starts the ids of the operations the store makes up for
// changes made without one when history is on over the primitives. They
// are never shown: a file or entry carrying one reports no operation.
const madeUpOperation = "agentmem.history:"

// shownOperation returns the operation id to show for id.
func shownOperation(id string) string {
	if strings.HasPrefix(id, madeUpOperation) {
		return ""
	}
	return id
}
