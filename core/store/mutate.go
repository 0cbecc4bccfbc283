package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// change is one validated mutation.
type change struct {
	kind     driver.Kind
	path     string
	content  string
	meta     map[string]string
	expected string
	op       *Operation
}

func (c change) verb() string {
	if c.kind == driver.KindDelete {
		return "deleted"
	}
	return "written"
}

// conflict wraps a driver precondition failure as ErrConflict.
func (c change) conflict(err error) error {
	return fmt.Errorf("%w: memory path %q changed before it could be %s: %w", ErrConflict, c.path, c.verb(), err)
}

func isPrecondition(err error) bool { return errors.Is(err, driver.ErrPrecondition) }

// refused reports a driver error that guarantees nothing was written.
func refused(err error) bool {
	return errors.Is(err, driver.ErrTooLarge) || errors.Is(err, driver.ErrPathEscape) || errors.Is(err, driver.ErrReservedPath)
}

// maxReserveRounds bounds how often a mutation re-contends for its
// operation's receipt when concurrent attempts keep dropping it.
const maxReserveRounds = 8

func (s *Store) mutate(ctx context.Context, c change) (Mutation, error) {
	if err := ctx.Err(); err != nil {
		return Mutation{}, err
	}
	switch {
	case s.mutator != nil:
		return s.mutateAtomic(ctx, c)
	case c.op == nil:
		return s.mutatePlain(ctx, c)
	default:
		return s.mutateTracked(ctx, c)
	}
}

func (s *Store) receipt(c change, now time.Time, version string, completed bool) driver.Receipt {
	return driver.Receipt{
		ID:          c.op.ID,
		Fingerprint: c.op.Fingerprint,
		Kind:        c.kind,
		Path:        c.path,
		Expected:    c.expected,
		Version:     version,
		Existed:     c.expected != "",
		Completed:   completed,
		CreatedAt:   now,
		ExpiresAt:   now.Add(s.retention),
	}
}

// replay turns a completed receipt into the result a replay returns.
func replay(r *driver.Receipt) Mutation {
	m := Mutation{Replayed: true, Existed: r.Existed}
	if r.Kind == driver.KindWrite {
		m.Version = r.Version
	}
	return m
}

// mutateAtomic runs one change through the driver's atomic mutation.
func (s *Store) mutateAtomic(ctx context.Context, c change) (Mutation, error) {
	for round := 0; ; round++ {
		now := s.now()
		p := driver.MutateParams{Kind: c.kind, Path: c.path, Content: c.content, Metadata: c.meta, Expected: c.expected}
		if c.kind == driver.KindWrite {
			p.Version = newVersion(now, "")
		}
		if c.op != nil {
			r := s.receipt(c, now, p.Version, true)
			p.Receipt = &r
		}
		res, err := s.mutator.Mutate(ctx, p)
		if err != nil && isPrecondition(err) && c.op != nil {
			// A concurrent attempt of the same operation may have won the
			// race for the file; its receipt then answers for us.
			if r, gerr := s.d.GetReceipt(ctx, c.op.ID); gerr == nil && r != nil {
				res.Existing, err = r, nil
			}
		}
		if err != nil {
			if isPrecondition(err) {
				return Mutation{}, c.conflict(err)
			}
			return Mutation{}, err
		}
		if ex := res.Existing; ex != nil {
			if ex.Fingerprint != c.op.Fingerprint {
				return Mutation{}, fmt.Errorf("%w: operation %q", ErrOperationConflict, c.op.ID)
			}
			if !ex.Completed {
				done, err := s.settle(ctx, ex, true)
				if err != nil {
					return Mutation{}, err
				}
				if done == nil && round < maxReserveRounds {
					continue
				}
				if done == nil {
					return Mutation{}, fmt.Errorf("agentmem: operation %q stays contended", c.op.ID)
				}
				ex = done
			}
			return replay(ex), nil
		}
		return Mutation{Version: p.Version, Existed: c.expected != ""}, nil
	}
}

// mutatePlain applies a change without an operation over the primitives.
func (s *Store) mutatePlain(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.expected); err != nil {
		return Mutation{}, err
	}
	var err error
	m := Mutation{Existed: c.expected != ""}
	switch {
	case c.kind == driver.KindWrite:
		m.Version = newVersion(s.now(), "")
		f := driver.File{Path: c.path, Content: c.content, Version: m.Version, Metadata: c.meta}
		if c.expected == "" {
			err = s.createOver(ctx, f)
		} else {
			err = s.d.ReplaceFile(ctx, f, c.expected)
		}
	case c.expected == "":
		err = s.checkAbsent(ctx, c.path)
	default:
		err = s.d.DeleteFile(ctx, c.path, c.expected)
	}
	if err != nil {
		if isPrecondition(err) {
			return Mutation{}, c.conflict(err)
		}
		return Mutation{}, err
	}
	return m, nil
}

// mutateTracked applies a change with an operation over the nine
// primitives: reserve a pending receipt whose version is the one the change
// writes, apply the conditional change, complete the receipt.
func (s *Store) mutateTracked(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.expected); err != nil {
		return Mutation{}, err
	}
	now := s.now()
	rec := s.receipt(c, now, newVersion(now, c.op.ID), false)
	for round := 0; ; round++ {
		ex, err := s.reserve(ctx, rec)
		if err != nil {
			return Mutation{}, err
		}
		if ex == nil {
			break // the pending receipt is ours
		}
		if ex.Fingerprint != c.op.Fingerprint {
			return Mutation{}, fmt.Errorf("%w: operation %q", ErrOperationConflict, c.op.ID)
		}
		if !ex.Completed {
			if ex, err = s.settle(ctx, ex, true); err != nil {
				return Mutation{}, err
			}
		}
		if ex != nil {
			return replay(ex), nil
		}
		if round >= maxReserveRounds {
			return Mutation{}, fmt.Errorf("agentmem: operation %q stays contended", c.op.ID)
		}
	}

	err := s.apply(ctx, c, rec)
	if err == nil {
		return s.finish(ctx, c, rec), nil
	}
	if isPrecondition(err) {
		s.drop(ctx, rec)
		return Mutation{}, c.conflict(err)
	}
	if refused(err) {
		s.drop(ctx, rec)
		return Mutation{}, err
	}
	// Unknown outcome (a lost reply or a failed request). The identical
	// conditional change is safe to repeat: if the first landed, this one
	// fails on its condition and the row shows our version.
	err2 := s.apply(ctx, c, rec)
	if err2 == nil {
		return s.finish(ctx, c, rec), nil
	}
	if isPrecondition(err2) {
		f, gerr := s.d.GetFile(ctx, c.path)
		if gerr != nil {
			return Mutation{}, err
		}
		if f != nil && f.Version == rec.Version {
			return s.finish(ctx, c, rec), nil
		}
		s.drop(ctx, rec)
		return Mutation{}, c.conflict(err2)
	}
	return Mutation{}, err // the receipt stays pending; a replay settles it
}

// reserve stores rec as a pending receipt. It returns nil when rec is
// reserved (by this call, even if the reply was lost), or the receipt that
// already holds the id.
func (s *Store) reserve(ctx context.Context, rec driver.Receipt) (*driver.Receipt, error) {
	var err error
	for range 3 {
		if err = s.d.ReserveReceipt(ctx, rec); err == nil {
			return nil, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		r, gerr := s.d.GetReceipt(ctx, rec.ID)
		if gerr != nil {
			return nil, err
		}
		if r == nil {
			continue // dropped meanwhile, or our reserve never landed
		}
		if r.Version == rec.Version && !r.Completed {
			return nil, nil // ours landed; the reply was lost
		}
		return r, nil
	}
	return nil, err
}

// apply makes the conditional change of a tracked mutation: the row written
// carries rec.Version and the operation id.
func (s *Store) apply(ctx context.Context, c change, rec driver.Receipt) error {
	switch {
	case c.kind == driver.KindWrite:
		f := driver.File{Path: c.path, Content: c.content, Version: rec.Version, OperationID: rec.ID, Metadata: c.meta}
		if c.expected == "" {
			return s.createOver(ctx, f)
		}
		return s.d.ReplaceFile(ctx, f, c.expected)
	case c.expected == "":
		return s.checkAbsent(ctx, c.path)
	default:
		// A tombstone carrying the operation is the evidence that this
		// delete landed, whatever happens to the path afterwards.
		t := driver.File{Path: c.path, Version: rec.Version, OperationID: rec.ID, Tombstone: true, ExpiresAt: rec.ExpiresAt}
		return s.d.ReplaceFile(ctx, t, c.expected)
	}
}

// finish completes our receipt (best effort: the change has landed, so the
// result is true either way; a pending receipt is settled later).
func (s *Store) finish(ctx context.Context, c change, rec driver.Receipt) Mutation {
	rec.Completed = true
	err := s.d.CompleteReceipt(ctx, rec)
	if err != nil && !isPrecondition(err) && ctx.Err() == nil {
		err = s.d.CompleteReceipt(ctx, rec)
	}
	if err == nil {
		s.markCompleted(rec.ID)
		if c.kind == driver.KindDelete && c.expected != "" {
			// The receipt now answers for the delete; the tombstone can go.
			_ = s.d.DeleteFile(ctx, c.path, rec.Version)
		}
	}
	m := Mutation{Existed: rec.Existed}
	if c.kind == driver.KindWrite {
		m.Version = rec.Version
	}
	return m
}

// drop removes our pending receipt after a change that did not land. A
// failure leaves it pending, to be settled by a later replay.
func (s *Store) drop(ctx context.Context, rec driver.Receipt) {
	if err := s.d.DropReceipt(ctx, rec.ID, rec.Version); err != nil && !isPrecondition(err) && ctx.Err() == nil {
		_ = s.d.DropReceipt(ctx, rec.ID, rec.Version)
	}
}

// checkAbsent is the condition of a delete that expects no file.
func (s *Store) checkAbsent(ctx context.Context, path string) error {
	f, err := s.d.GetFile(ctx, path)
	if err != nil {
		return err
	}
	if f != nil && !f.Tombstone {
		return fmt.Errorf("file exists: %w", driver.ErrPrecondition)
	}
	return nil
}

// createOver creates f where no file exists, replacing a tombstone if one
// stands there (after settling the operation it records).
func (s *Store) createOver(ctx context.Context, f driver.File) error {
	for range 4 {
		err := s.d.CreateFile(ctx, f)
		if err == nil || !isPrecondition(err) {
			return err
		}
		cur, gerr := s.d.GetFile(ctx, f.Path)
		if gerr != nil {
			return gerr
		}
		if cur == nil {
			continue // removed meanwhile
		}
		if !cur.Tombstone {
			return err
		}
		if err := s.settleVersion(ctx, cur.Version); err != nil {
			return err
		}
		if err = s.d.ReplaceFile(ctx, f, cur.Version); err == nil || !isPrecondition(err) {
			return err
		}
	}
	return fmt.Errorf("path keeps changing: %w", driver.ErrPrecondition)
}

// settleVersion makes sure that the operation which wrote a row with
// version v (on the primitive path) is recorded as completed before the row
// is overwritten, since the row is the only evidence that it landed.
func (s *Store) settleVersion(ctx context.Context, v string) error {
	id := versionOperation(v)
	if id == "" || s.isCompleted(id) {
		return nil
	}
	r, err := s.d.GetReceipt(ctx, id)
	if err != nil {
		return err
	}
	if r != nil && !r.Completed && r.Version == v {
		// v was observed as a row's version, so the operation landed.
		r.Completed = true
		if err := s.d.CompleteReceipt(ctx, *r); err != nil && !isPrecondition(err) {
			return err
		}
	}
	s.markCompleted(id)
	return nil
}

// settle resolves a pending receipt found by a replay. With wait set it
// first waits, up to Options.PendingTimeout after the receipt was reserved,
// for a concurrent attempt to finish. Then it looks at the evidence: the
// row carries the receipt's version → the operation landed and is
// completed; otherwise it is fenced off (so a request still in flight can
// never land) and dropped. It returns the completed receipt, or nil when
// the operation was dropped.
func (s *Store) settle(ctx context.Context, r *driver.Receipt, wait bool) (*driver.Receipt, error) {
	for {
		if wait {
			var err error
			if r, err = s.await(ctx, r); err != nil || r == nil || r.Completed {
				return r, err
			}
			wait = false
		}
		f, err := s.d.GetFile(ctx, r.Path)
		if err != nil {
			return nil, err
		}
		if f != nil && f.Version == r.Version {
			done := *r
			done.Completed = true
			if err := s.d.CompleteReceipt(ctx, done); err != nil {
				if !isPrecondition(err) {
					return nil, err
				}
				if r, err = s.d.GetReceipt(ctx, r.ID); err != nil || r == nil || r.Completed {
					return r, err
				}
				continue
			}
			s.markCompleted(r.ID)
			return &done, nil
		}
		if mayLand(r, f) {
			if err := s.fence(ctx, r.Path, f); err != nil {
				if isPrecondition(err) {
					continue // the row changed meanwhile; look again
				}
				return nil, err
			}
		}
		if err := s.d.DropReceipt(ctx, r.ID, r.Version); err != nil {
			if !isPrecondition(err) {
				return nil, err
			}
			if r, err = s.d.GetReceipt(ctx, r.ID); err != nil || r == nil || r.Completed {
				return r, err
			}
			continue
		}
		return nil, nil
	}
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
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 100*time.Millisecond)
		r2, err := s.d.GetReceipt(ctx, r.ID)
		if err != nil || r2 == nil || r2.Completed {
			return r2, err
		}
		r = r2
	}
}

// mayLand reports whether the attempt recorded by pending receipt r could
// still apply to row f (nil = no row): the row is still in the state the
// attempt's condition expects.
func mayLand(r *driver.Receipt, f *driver.File) bool {
	switch {
	case r.Kind == driver.KindDelete && r.Expected == "":
		return false // such a delete writes nothing
	case r.Expected == "":
		return f == nil || f.Tombstone
	default:
		return f != nil && f.Version == r.Expected
	}
}

// fence gives the row at path a fresh version without changing what it
// holds (or puts a tombstone where there is none), so that any conditional
// request still expecting the old state fails.
func (s *Store) fence(ctx context.Context, path string, f *driver.File) error {
	now := s.now()
	if f == nil {
		return s.d.CreateFile(ctx, driver.File{Path: path, Version: newVersion(now, ""), Tombstone: true, ExpiresAt: now.Add(s.retention)})
	}
	if err := s.settleVersion(ctx, f.Version); err != nil {
		return err
	}
	g := *f
	g.Version = newVersion(now, "")
	return s.d.ReplaceFile(ctx, g, f.Version)
}

const completedCacheSize = 4096

func (s *Store) markCompleted(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed == nil || len(s.completed) >= completedCacheSize {
		s.completed = make(map[string]struct{})
	}
	s.completed[id] = struct{}{}
}

func (s *Store) isCompleted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.completed[id]
	return ok
}
