// How exactly-once works
//
// This file is the tracked path: a change with an operation over the nine
// primitives. The whole argument is docs/exactly-once.md
// (https://github.com/agentmem/agentmem/blob/main/docs/exactly-once.md); in short:
//
//  1. The store generates every version, unique forever, and reserves a pending
//     receipt carrying the version it is about to write (reserve).
//  2. Every conditional write of an attempt names a version that existed before
//     its reservation; a create first puts a tombstone on an empty path and
//     replaces it (prepareCreate, apply). Once that row moves on, the attempt
//     can never land, however late its request arrives.
//  3. The attempt completes its receipt when the change landed (finish), drops
//     it when it did not (drop), and repeats an unknown outcome once before
//     leaving the receipt pending.
//  4. A pending receipt is settled by evidence (settle.go): the row carries its
//     version, so it landed and is completed; otherwise the row is fenced or
//     confirmed and the receipt dropped. Rows written here name their operation
//     in the version, so whoever overwrites a row first completes the operation
//     that wrote it (settleVersion).

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// mutateTracked applies a change with an operation over the nine
// primitives: fix the row the change is conditioned on, reserve a pending
// receipt whose version is the one the change writes, apply the conditional
// change, complete the receipt.
//
// Every conditional write of an attempt names a version that existed before
// its reservation (a create replaces a tombstone, put there first when the
// path is empty). A settlement that finds the reservation pending either
// fences that row or finds it moved on; versions never repeat, so the
// attempt can then never land, however late its request arrives.
//
// A fence changes nothing a reader sees, so a change whose expected row was
// only fenced since (by the settlement of its own dead attempt, typically)
// is attempted again on the fenced row, under a new reservation that names
// the fence's version: the dead attempt still cannot land, and a later
// settlement of this one fences that version in turn.
func (s *Store) mutateTracked(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.path, c.expected); err != nil {
		return Mutation{}, err
	}
	cond := c.expected
	for round := 0; ; round++ {
		m, fenced, err := s.attempt(ctx, c, cond)
		if fenced == "" || round >= maxSettleRounds {
			return m, err
		}
		cond = fenced
	}
}

// maxReserveRounds bounds how often a mutation re-contends for its
// operation's receipt when concurrent attempts keep dropping it.
const maxReserveRounds = 8

// attempt is one tracked attempt of c on the row with version cond (for a
// create, it finds its own). When the attempt did not land because the row
// was fenced since c.expected, it returns the fence's version, to attempt
// again on, with the conflict.
func (s *Store) attempt(ctx context.Context, c change, cond string) (Mutation, string, error) {
	var rec driver.Receipt
	var prep error // a refusal of the create's tombstone, reported after the receipt check
	for round := 0; ; round++ {
		if c.kind == driver.KindWrite && c.expected == "" {
			if cond, prep = s.prepareCreate(ctx, c.path); prep != nil && !refused(prep) {
				return Mutation{}, "", prep
			}
		}
		now := s.now() // the lease starts at the reservation
		rec = s.receipt(c, now, newVersion(now, c.op.ID), false)
		if c.expected != "" {
			rec.Expected = cond // what a settlement must fence
		}
		ex, err := s.reserve(ctx, rec)
		if err != nil {
			return Mutation{}, "", err
		}
		if ex == nil {
			break // the pending receipt is ours
		}
		done, row, err := s.settleHeld(ctx, c.op, ex)
		if err != nil {
			return Mutation{}, "", err
		}
		if done != nil {
			return replay(done), "", nil
		}
		if c.expected != "" && refenced(row, c.expected) {
			// The settlement fenced (or confirmed) the very row c
			// expects: nothing was written since, so c applies there.
			cond = row
		}
		if round >= maxReserveRounds {
			return Mutation{}, "", c.contended()
		}
	}

	if prep == nil && c.recorded() {
		// Before the change: an entry without its change is removed by
		// whoever settles the receipt; a change without its entry could
		// never be told apart.
		if err := s.recordHistoryPending(ctx, c, rec); err != nil {
			s.drop(ctx, rec)
			return Mutation{}, "", err
		}
	}
	if prep == nil && c.creates() && cond != "" {
		// After the receipt lookup, so a replay never pays for it; with a
		// file at the path (cond "") the create conflicts anyway.
		prep = s.checkCollision(ctx, c.path)
	}
	if prep != nil {
		s.drop(ctx, rec)
		return Mutation{}, "", prep
	}
	err := s.apply(ctx, c, rec, cond)
	if err == nil {
		return s.finish(ctx, c, rec), "", nil
	}
	if isPrecondition(err) {
		landed, dropped := s.drop(ctx, rec)
		if landed {
			return s.result(c, rec), "", nil
		}
		if dropped {
			return Mutation{}, s.fencedSince(ctx, c, cond), c.conflict(err)
		}
		return Mutation{}, "", c.conflict(err)
	}
	if refused(err) {
		s.drop(ctx, rec)
		return Mutation{}, "", err
	}
	// Unknown outcome (a lost reply or a failed request). The identical
	// conditional change is safe to repeat: if the first landed, this one
	// fails on its condition and the row shows our version.
	err2 := s.apply(ctx, c, rec, cond)
	if err2 == nil {
		return s.finish(ctx, c, rec), "", nil
	}
	if isPrecondition(err2) {
		f, gerr := s.d.GetFile(ctx, c.path)
		if gerr != nil {
			return Mutation{}, "", err
		}
		if f != nil && f.Version == rec.Version {
			return s.finish(ctx, c, rec), "", nil
		}
		// A writer that overwrote our row completed our receipt first.
		if landed, _ := s.drop(ctx, rec); landed {
			return s.result(c, rec), "", nil
		}
		return Mutation{}, "", c.conflict(err2)
	}
	return Mutation{}, "", err // the receipt stays pending; a replay settles it
}

// prepareCreate returns the version of the tombstone a tracked create
// replaces, putting one there when the path is empty (and settling the
// operation an existing tombstone records), or "" when a file exists there.
func (s *Store) prepareCreate(ctx context.Context, path string) (string, error) {
	var err error
	for range 4 {
		now := s.now()
		t := driver.File{Path: path, Version: newVersion(now, ""), Tombstone: true, ExpiresAt: now.Add(s.retention)}
		if err = s.d.CreateFile(ctx, t); err == nil {
			return t.Version, nil
		}
		if refused(err) {
			return "", err
		}
		f, gerr := s.d.GetFile(ctx, path)
		if gerr != nil {
			return "", gerr
		}
		switch {
		case f == nil:
			continue // removed meanwhile, or our tombstone did not land
		case !f.Tombstone:
			return "", nil
		}
		if err := s.settleVersion(ctx, path, f.Version); err != nil {
			return "", err
		}
		return f.Version, nil
	}
	if isPrecondition(err) {
		return "", fmt.Errorf("%w: %q keeps changing: %w", ErrConflict, path, err)
	}
	return "", err
}

func (s *Store) receipt(c change, now time.Time, version string, completed bool) driver.Receipt {
	retention := s.retention
	if c.record {
		// A pending entry is decided by its change's receipt: the receipt
		// must outlive it (see confirmHistory).
		retention = max(retention, s.historyRetention)
	}
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
		ExpiresAt:   now.Add(retention),
	}
}

// reserve stores rec as a pending receipt. It returns nil when rec is
// reserved (by this call, even if the reply was lost), or the receipt that
// already holds the id.
func (s *Store) reserve(ctx context.Context, rec driver.Receipt) (*driver.Receipt, error) {
	var err error
	for i := range 8 {
		if err = s.d.ReserveReceipt(ctx, rec); err == nil {
			return nil, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		r, gerr := s.d.GetReceipt(ctx, rec.ID)
		if gerr != nil {
			if isPrecondition(err) {
				return nil, gerr // the reservation's own refusal says nothing
			}
			return nil, err
		}
		if r == nil {
			// Dropped meanwhile by a concurrent attempt, or our reserve never
			// landed: try again, spreading out contending attempts.
			if err := driver.Sleep(ctx, time.Duration(i*i)*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		if r.Version == rec.Version && !r.Completed {
			return nil, nil // ours landed; the reply was lost
		}
		return r, nil
	}
	if isPrecondition(err) {
		return nil, fmt.Errorf("%w: operation %q: its receipt keeps changing: %w", ErrConflict, rec.ID, err)
	}
	return nil, err
}

// replay turns a completed receipt into the result a replay returns.
func replay(r *driver.Receipt) Mutation {
	m := Mutation{Replayed: true, Existed: r.Existed}
	if r.Kind == driver.KindWrite {
		m.Version = r.Version
	}
	return m
}

// apply makes the conditional change of a tracked mutation: the row written
// carries rec.Version and the operation id. cond is the version the row
// must have: c.expected or a fence of it, or for a create the tombstone it
// replaces ("" when a file is there).
func (s *Store) apply(ctx context.Context, c change, rec driver.Receipt, cond string) error {
	switch {
	case c.kind == driver.KindWrite:
		if cond == "" {
			return fmt.Errorf("file exists: %w", driver.ErrPrecondition)
		}
		f := driver.File{Path: c.path, Content: c.content, Version: rec.Version, OperationID: rec.ID, Metadata: c.meta}
		return s.d.ReplaceFile(ctx, f, cond)
	case c.expected == "":
		return s.checkAbsent(ctx, c.path)
	default:
		// A tombstone carrying the operation is the evidence that this
		// delete landed, whatever happens to the path afterwards.
		t := driver.File{Path: c.path, Version: rec.Version, OperationID: rec.ID, Tombstone: true, ExpiresAt: rec.ExpiresAt}
		return s.d.ReplaceFile(ctx, t, cond)
	}
}

// finish completes our receipt (best effort: the change has landed, so the
// result is true either way; a pending receipt is settled later).
func (s *Store) finish(ctx context.Context, c change, rec driver.Receipt) Mutation {
	rec.Completed = true
	err := s.bookkeep(ctx, func(ctx context.Context) error { return s.d.CompleteReceipt(ctx, rec) })
	if err != nil {
		s.warn(ctx, "completing a receipt failed after its change landed; it stays pending until a replay or the next write of the path settles it", rec.ID, c.path, err)
	}
	if err == nil {
		if herr := s.recordHistoryLanded(ctx, c, rec); herr != nil {
			s.warn(ctx, "completing a history entry failed after its change landed; it stays pending until it is read or the path is written again", rec.ID, c.path, herr)
		} else {
			s.markCompleted(rec.Version)
		}
		if c.kind == driver.KindDelete && c.expected != "" {
			// The receipt now answers for the delete; the tombstone can go.
			ctx, cancel := s.cleanup(ctx)
			if err := s.d.DeleteFile(ctx, c.path, rec.Version); err != nil && !isPrecondition(err) {
				s.warn(ctx, "removing a delete's tombstone failed; it expires after the receipt retention", rec.ID, c.path, err)
			}
			cancel()
		}
	}
	return s.result(c, rec)
}

// result is what a tracked change that landed returns.
func (s *Store) result(c change, rec driver.Receipt) Mutation {
	m := Mutation{Existed: rec.Existed}
	if c.kind == driver.KindWrite {
		m.Version = rec.Version
	}
	return m
}

// drop removes our pending receipt after a change that did not land, or
// may not have. It reports whether the receipt turned out completed with
// our version (landed: the change did land, and a writer that overwrote
// the row settled it first), and whether it removed the receipt. A failure
// leaves the receipt pending, to be settled by a later replay.
func (s *Store) drop(ctx context.Context, rec driver.Receipt) (landed, dropped bool) {
	err := s.bookkeep(ctx, func(ctx context.Context) error { return s.d.DropReceipt(ctx, rec.ID, rec.Version) })
	if !isPrecondition(err) {
		if err != nil {
			s.warn(ctx, "dropping a receipt failed; it stays pending until a replay or the next write of the path settles it", rec.ID, rec.Path, err)
		} else if herr := s.dropHistory(ctx, rec.Path, rec.Version); herr != nil {
			s.warn(ctx, "removing the history entry of a change that did not land failed; it is removed when it is read", rec.ID, rec.Path, herr)
		}
		return false, err == nil
	}
	ctx, cancel := s.cleanup(ctx)
	defer cancel()
	r, gerr := s.d.GetReceipt(ctx, rec.ID)
	if gerr != nil {
		s.warn(ctx, "reading a receipt whose drop was refused failed; the change is reported as not applied", rec.ID, rec.Path, gerr)
	}
	landed = gerr == nil && r != nil && r.Completed && r.Version == rec.Version
	if landed {
		_ = s.landed(ctx, rec.Path, rec.Version, true) // best effort, as the drop
	}
	return landed, false
}

// fencedSince returns the version of the row at c.path when it is the row
// c expects, fenced since the version cond that an attempt of c found gone
// (so nothing was written there since c.expected), or "".
func (s *Store) fencedSince(ctx context.Context, c change, cond string) string {
	if c.expected == "" {
		return "" // a create finds its own row; a delete of nothing writes none
	}
	f, err := s.d.GetFile(ctx, c.path)
	if err != nil || f == nil || f.Tombstone || f.Version == cond || !refenced(f.Version, c.expected) {
		return ""
	}
	return f.Version
}

// bookkeep runs a receipt call that ends an attempt, once more if it failed
// for another reason than its condition.
func (s *Store) bookkeep(ctx context.Context, call func(context.Context) error) error {
	var err error
	for range 2 {
		c, cancel := s.cleanup(ctx)
		err = call(c)
		cancel()
		if err == nil || isPrecondition(err) {
			break
		}
	}
	return err
}

// cleanup returns the context for the bookkeeping that ends an attempt: the
// caller's while it lasts; once the caller has given up, a detached one
// bounded by the pending timeout, since a receipt left pending would stall
// the next replay that long.
func (s *Store) cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), s.pending)
}
