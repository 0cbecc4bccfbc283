// Settlement, in one place: deciding by evidence whether the attempt a pending
// receipt records landed (complete it) or not (fence or confirm its row, drop
// it), for a replay, a write over a row, or a reader of a pending history entry.

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// settleHeld answers for receipt ex, found holding the id of op when an
// attempt of op began (the atomic and tracked paths, Append, GetOperation):
// ErrOperationConflict when it records another operation; otherwise the
// completed receipt to replay, after settling it (waiting for a live
// attempt first) when it is pending, or nil when the settlement dropped it,
// with row the version of the file it fenced or confirmed.
func (s *Store) settleHeld(ctx context.Context, op *Operation, ex *driver.Receipt) (done *driver.Receipt, row string, err error) {
	if ex.Fingerprint != op.Fingerprint {
		return nil, "", fmt.Errorf("%w: operation %q", ErrOperationConflict, op.ID)
	}
	if ex.Completed {
		return ex, "", nil
	}
	return s.settle(ctx, ex, true)
}

// landed records that the attempt which wrote version v of path landed and
// its receipt is completed: its history entry says so (completeHistory,
// with settling as there) and this store remembers it (markCompleted).
func (s *Store) landed(ctx context.Context, path, v string, settling bool) error {
	if _, err := s.completeHistory(ctx, path, v, settling); err != nil {
		return err
	}
	s.markCompleted(v)
	return nil
}

// settleVersion makes sure that the operation which wrote a row with
// version v (on the primitive path) is recorded as completed before the row
// is overwritten, since the row is the only evidence that it landed.
func (s *Store) settleVersion(ctx context.Context, path, v string) error {
	if versionOperation(v) == "" || s.isCompleted(v) {
		return nil
	}
	return s.settleRow(ctx, path, v)
}

// settleRow is settleVersion without the shortcut of the versions known
// settled: the caller was told the receipt is pending.
func (s *Store) settleRow(ctx context.Context, path, v string) error {
	id := versionOperation(v)
	if id == "" {
		return nil
	}
	r, err := s.d.GetReceipt(ctx, id)
	if err != nil {
		return err
	}
	settling := r != nil && !r.Completed && r.Version == v
	if settling {
		// v was observed as a row's version, so the operation landed.
		r.Completed = true
		if err := s.d.CompleteReceipt(ctx, *r); err != nil && !isPrecondition(err) {
			return err
		} else if err == nil {
			s.settled(ctx, SettlementCompleted)
		}
	}
	// The row is about to be overwritten: its entry must say it landed
	// now, while the row can still prove it.
	return s.landed(ctx, path, v, settling)
}

// settle resolves a pending receipt found by a replay. With wait set it
// first waits, up to Options.PendingTimeout after the receipt was reserved,
// for a concurrent attempt to finish. Then it looks at the evidence: the
// row carries the receipt's version → the operation landed and is
// completed; otherwise it is fenced off (so a request still in flight can
// never land) and dropped. It returns the completed receipt, or nil when
// the operation was dropped; then row is the version of the file it fenced
// or confirmed ("" if it wrote none, or left no file there).
func (s *Store) settle(ctx context.Context, r *driver.Receipt, wait bool) (done *driver.Receipt, row string, err error) {
	round := 0
	for {
		if wait {
			if r, err = s.await(ctx, r); err != nil || r == nil || r.Completed {
				return r, "", err
			}
			wait = false
		}
		f, err := s.d.GetFile(ctx, r.Path)
		if err != nil {
			return nil, "", err
		}
		if f != nil && f.Version == r.Version {
			c := *r
			c.Completed = true
			if err := s.d.CompleteReceipt(ctx, c); err != nil {
				if !isPrecondition(err) {
					return nil, "", err
				}
				if r, wait, err = s.reread(ctx, r); err != nil || r == nil || r.Completed {
					return r, "", err
				}
				continue
			}
			if err := s.landed(ctx, r.Path, r.Version, true); err != nil {
				return nil, "", err
			}
			s.settled(ctx, SettlementCompleted)
			return &c, "", nil
		}
		row = ""
		if writes(r) {
			// The attempt may still land on the row as read: fence it. If
			// the row has moved on, confirm that with a write conditional on
			// the state read, so a read that lagged (Cosmos DB across
			// sessions) cannot make us drop an attempt that can still land.
			act := s.fence
			if !mayLand(r, f) {
				act = s.confirm
			}
			if row, err = act(ctx, r.Path, f); err != nil {
				if isPrecondition(err) {
					if round++; round >= maxSettleRounds {
						err := fmt.Errorf("%w: operation %q: %q keeps changing while it is settled", ErrConflict, r.ID, r.Path)
						s.warn(ctx, "settling a pending receipt gave up: its path kept changing; it stays pending", r.ID, r.Path, err)
						s.settled(ctx, SettlementGaveUp)
						return nil, "", err
					}
					continue // the row changed meanwhile; look again
				}
				return nil, "", err
			}
		}
		if err := s.d.DropReceipt(ctx, r.ID, r.Version); err != nil {
			if !isPrecondition(err) {
				return nil, "", err
			}
			if r, wait, err = s.reread(ctx, r); err != nil || r == nil || r.Completed {
				return r, "", err
			}
			continue
		}
		if err := s.dropHistory(ctx, r.Path, r.Version); err != nil {
			return nil, "", err
		}
		s.settled(ctx, SettlementRolledBack)
		return nil, row, nil
	}
}

// reread reads receipt r again after it changed under a settlement. A new
// attempt's reservation gets its own lease: wait reports whether it differs
// from r.
func (s *Store) reread(ctx context.Context, r *driver.Receipt) (*driver.Receipt, bool, error) {
	r2, err := s.d.GetReceipt(ctx, r.ID)
	if err != nil || r2 == nil {
		return nil, false, err
	}
	return r2, r2.Version != r.Version, nil
}

// await polls a pending receipt until it is completed, dropped, or older
// than the pending timeout. It returns the last receipt seen (nil if gone).
func (s *Store) await(ctx context.Context, r *driver.Receipt) (*driver.Receipt, error) {
	backoff := 2 * time.Millisecond
	for {
		left := r.CreatedAt.Add(s.pending).Sub(s.now())
		if left <= 0 {
			return r, nil
		}
		if err := driver.Sleep(ctx, min(backoff, left)); err != nil {
			return nil, err
		}
		backoff = min(2*backoff, 100*time.Millisecond)
		r2, err := s.d.GetReceipt(ctx, r.ID)
		if err != nil || r2 == nil || r2.Completed {
			return r2, err
		}
		r = r2
	}
}

// writes reports whether the attempt recorded by pending receipt r makes a
// conditional write at all (a delete of a path expected absent does not).
func writes(r *driver.Receipt) bool {
	return r.Kind != driver.KindDelete || r.Expected != ""
}

// mayLand reports whether the attempt recorded by pending receipt r could
// still apply to row f (nil = no row): the row is in the state the attempt's
// condition expects.
func mayLand(r *driver.Receipt, f *driver.File) bool {
	if r.Expected == "" {
		return f == nil || f.Tombstone // a create replaces a tombstone
	}
	return f != nil && f.Version == r.Expected
}

// confirm proves that the row at path is still f (nil = no row) with a write
// conditional on it that changes nothing a reader sees: the same row again,
// or a tombstone where there is none. It returns the version of the file
// left there ("" for none).
func (s *Store) confirm(ctx context.Context, path string, f *driver.File) (string, error) {
	if f == nil {
		return s.fence(ctx, path, nil)
	}
	return live(f, f.Version), s.d.ReplaceFile(ctx, *f, f.Version)
}

// maxSettleRounds bounds how often a settlement re-reads a row that keeps
// changing under its fence.
const maxSettleRounds = 16

// fence gives the row at path a fresh version without changing what it
// holds (or puts a tombstone where there is none), so that any conditional
// request still expecting the old state fails. It returns the version of
// the file it leaves there ("" for none).
func (s *Store) fence(ctx context.Context, path string, f *driver.File) (string, error) {
	now := s.now()
	if f == nil {
		return "", s.d.CreateFile(ctx, driver.File{Path: path, Version: newVersion(now, ""), Tombstone: true, ExpiresAt: now.Add(s.retention)})
	}
	if err := s.settleVersion(ctx, path, f.Version); err != nil {
		return "", err
	}
	g := *f
	g.Version = fenceVersion(now, f.Version)
	return live(f, g.Version), s.d.ReplaceFile(ctx, g, f.Version)
}

// live returns v when f is a file a reader sees, "" for a tombstone.
func live(f *driver.File, v string) string {
	if f.Tombstone {
		return ""
	}
	return v
}

// confirmHistory decides whether the pending entry e stands for a change
// that landed, completing or removing it. Its operation's receipt decides
// while it exists (settling it when it is pending); after that the row
// does: a change whose receipt is gone landed only if the row still
// carries its version, since the store completes an entry before a change
// overwrites the row it made (settleVersion).
func (s *Store) confirmHistory(ctx context.Context, e *driver.HistoryEntry) (bool, error) {
	var r *driver.Receipt
	var err error
	if id := versionOperation(e.Version); id != "" {
		if r, err = s.d.GetReceipt(ctx, id); err != nil {
			return false, err
		}
	}
	if r != nil && r.Version == e.Version {
		if !r.Completed && s.now().Before(r.CreatedAt.Add(s.pending)) {
			// The change is in flight: not landed as far as readers go,
			// and a reader must not fence a live writer.
			return false, nil
		}
		if !r.Completed {
			if r, _, err = s.settle(ctx, r, true); err != nil {
				return false, err
			}
			if r == nil || r.Version != e.Version {
				return false, s.dropHistory(ctx, e.Path, e.Version)
			}
		}
		_, err := s.completeHistory(ctx, e.Path, e.Version, true)
		return true, err
	}
	f, err := s.d.GetFile(ctx, e.Path)
	if err != nil {
		return false, err
	}
	if f != nil && refenced(f.Version, e.Version) {
		_, err := s.completeHistory(ctx, e.Path, e.Version, true)
		return true, err
	}
	err = s.historian.DropHistory(ctx, e.Path, e.Version)
	if isPrecondition(err) {
		return true, nil // completed meanwhile by the attempt itself
	}
	return false, err
}

const completedCacheSize = 4096

// markCompleted remembers that the receipt of the attempt that wrote
// version v is settled. Keyed by version, not operation: an expired
// operation may be applied anew under a fresh receipt.
func (s *Store) markCompleted(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed == nil || len(s.completed) >= completedCacheSize {
		s.completed = make(map[string]struct{})
	}
	s.completed[v] = struct{}{}
}

func (s *Store) isCompleted(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.completed[v]
	return ok
}
