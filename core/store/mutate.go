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
	// record: history is on, so the change records an entry.
	record bool
	// madeUp: op was made up by the store so that the change could be
	// recorded over the primitives; the caller gave none.
	madeUp bool
}

// recorded reports whether c changes something that the history records
// (a delete of a path expected absent changes nothing).
func (c change) recorded() bool {
	return c.record && (c.kind == driver.KindWrite || c.expected != "")
}

func (c change) verb() string {
	if c.kind == driver.KindDelete {
		return "deleted"
	}
	return "written"
}

// conflict wraps a driver precondition failure as ErrConflict.
func (c change) conflict(err error) error {
	return conflictError(c.path, c.verb(), err)
}

// contended reports an operation whose receipt or path kept changing under
// concurrent attempts: a conflict, so the caller re-reads and retries.
func (c change) contended() error {
	return fmt.Errorf("%w: operation %q on %q is contended", ErrConflict, c.op.ID, c.path)
}

func isPrecondition(err error) bool { return errors.Is(err, driver.ErrPrecondition) }

// refused reports a driver error that guarantees nothing was written.
func refused(err error) bool {
	return errors.Is(err, driver.ErrTooLarge) || errors.Is(err, driver.ErrPathEscape) || errors.Is(err, driver.ErrReservedPath) ||
		errors.Is(err, driver.ErrPathCollision)
}

// maxReserveRounds bounds how often a mutation re-contends for its
// operation's receipt when concurrent attempts keep dropping it.
const maxReserveRounds = 8

func (s *Store) mutate(ctx context.Context, c change) (Mutation, error) {
	if err := ctx.Err(); err != nil {
		return Mutation{}, err
	}
	var err error
	if c.record, err = s.historyOn(); err != nil {
		return Mutation{}, err
	}
	switch {
	case s.mutator != nil:
		return s.mutateAtomic(ctx, c)
	case c.op == nil && !c.record:
		return s.mutatePlain(ctx, c)
	default:
		if c.op == nil {
			// Over the primitives only the receipt algorithm can tie an
			// entry to its change, so an untracked change gets an
			// operation of its own.
			c.op = &Operation{ID: madeUpOperation + newVersion(s.now(), ""), Fingerprint: madeUpOperation}
			c.madeUp = true
		}
		return s.mutateTracked(ctx, c)
	}
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

// replay turns a completed receipt into the result a replay returns.
func replay(r *driver.Receipt) Mutation {
	m := Mutation{Replayed: true, Existed: r.Existed}
	if r.Kind == driver.KindWrite {
		m.Version = r.Version
	}
	return m
}

// mutateAtomic runs one change through the driver's atomic mutation.
//
// A store sharing the backend without the Mutator (primitives only)
// leaves rows whose operation may still have a pending receipt, and
// tombstones. Whoever overwrites such a row first completes the operation
// that wrote it (settleVersion): before the Mutate for the row expected,
// which costs nothing when its version names no operation; and for a
// tombstone where the change expects no file, which the Mutate refuses
// like any row: its operation settled, the change is conditioned on the
// tombstone's version instead, so that it replaces (or, for a delete,
// removes) exactly that tombstone.
func (s *Store) mutateAtomic(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.path, c.expected); err != nil {
		return Mutation{}, err
	}
	cond := c.expected // the version the Mutate requires: a tombstone's for c.expected ""
	for round := 0; ; round++ {
		now := s.now()
		p := driver.MutateParams{Kind: c.kind, Path: c.path, Expected: cond}
		if c.kind == driver.KindWrite {
			p.Content, p.Metadata, p.Version = c.content, c.meta, newVersion(now, "")
		}
		if c.recorded() {
			v := p.Version
			if v == "" {
				v = newVersion(now, "") // a delete's id in the history
			}
			p.History = s.historyEntry(c, v, now)
		}
		if c.op != nil {
			r := s.receipt(c, now, p.Version, true)
			p.Receipt = &r
		}
		var res driver.MutateResult
		var err error
		if c.creates() && (!s.collide || cond != "") {
			// No receipt lookup precedes Mutate, so a replay pays for the
			// check too; a refusal looks at the receipt below. A driver
			// that checks in the Mutate itself saves both requests, but
			// only for a create: over a tombstone the store checks.
			err = s.checkCollision(ctx, c.path)
		}
		if err == nil {
			res, err = s.mutator.Mutate(ctx, p)
		}
		if err != nil && (isPrecondition(err) || errors.Is(err, ErrPathCollision)) && c.op != nil {
			// A concurrent attempt of the same operation may have won the
			// race for the file, or the operation is a replay of a create
			// whose path is blocked since; its receipt then answers for us.
			if r, gerr := s.d.GetReceipt(ctx, c.op.ID); gerr == nil && r != nil {
				res.Existing, err = r, nil
			}
		}
		if err != nil && isPrecondition(err) && c.expected == "" && round < maxReserveRounds {
			// A tombstone (or a fresh one, when the one expected moved on)
			// makes no file: settle it and condition the change on it.
			t, terr := s.tombstoneAt(ctx, c.path)
			if terr != nil {
				return Mutation{}, terr
			}
			if t != "" || cond != "" {
				cond = t // "" when it was removed meanwhile: a plain create again
				continue
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
				done, _, err := s.settle(ctx, ex, true)
				if err != nil {
					return Mutation{}, err
				}
				if done == nil && round < maxReserveRounds {
					continue
				}
				if done == nil {
					return Mutation{}, c.contended()
				}
				ex = done
			}
			return replay(ex), nil
		}
		return Mutation{Version: p.Version, Existed: c.expected != ""}, nil
	}
}

// tombstoneAt returns the version of the tombstone at path, after settling
// the operation it records (a delete's, which may have landed but not been
// completed), or "" when a file or no row is there.
func (s *Store) tombstoneAt(ctx context.Context, path string) (string, error) {
	f, err := s.d.GetFile(ctx, path)
	if err != nil || f == nil || !f.Tombstone {
		return "", err
	}
	if err := s.settleVersion(ctx, path, f.Version); err != nil {
		return "", err
	}
	return f.Version, nil
}

// mutatePlain applies a change without an operation over the primitives.
func (s *Store) mutatePlain(ctx context.Context, c change) (Mutation, error) {
	if err := s.settleVersion(ctx, c.path, c.expected); err != nil {
		return Mutation{}, err
	}
	var err error
	m := Mutation{Existed: c.expected != ""}
	switch {
	case c.kind == driver.KindWrite:
		m.Version = newVersion(s.now(), "")
		f := driver.File{Path: c.path, Content: c.content, Version: m.Version, Metadata: c.meta}
		if c.expected == "" {
			if err = s.checkCollision(ctx, c.path); err == nil {
				err = s.createOver(ctx, f)
			}
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
		if ex.Fingerprint != c.op.Fingerprint {
			return Mutation{}, "", fmt.Errorf("%w: operation %q", ErrOperationConflict, c.op.ID)
		}
		if !ex.Completed {
			var row string
			if ex, row, err = s.settle(ctx, ex, true); err != nil {
				return Mutation{}, "", err
			}
			if ex == nil && c.expected != "" && refenced(row, c.expected) {
				// The settlement fenced (or confirmed) the very row c
				// expects: nothing was written since, so c applies there.
				cond = row
			}
		}
		if ex != nil {
			return replay(ex), "", nil
		}
		if round >= maxReserveRounds {
			return Mutation{}, "", c.contended()
		}
	}

	if prep == nil && c.recorded() {
		// Before the change: an entry without its change is removed by
		// whoever settles the receipt; a change without its entry could
		// never be told apart.
		e := s.historyEntry(c, rec.Version, rec.CreatedAt)
		e.Pending = true
		if err := s.historian.PutHistory(ctx, *e); err != nil {
			s.drop(ctx, rec)
			return Mutation{}, "", errHistoryEntry(c.path, err)
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
		missing, herr := s.completeHistory(ctx, c.path, rec.Version, false)
		if herr == nil && missing && c.recorded() {
			// A ForgetHistory ran while the change was in flight: the
			// change landed after it, so it is recorded again.
			herr = s.historian.PutHistory(ctx, *s.historyEntry(c, rec.Version, rec.CreatedAt))
			if isPrecondition(herr) {
				herr = nil
			}
		}
		if herr != nil {
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
		if _, herr := s.completeHistory(ctx, rec.Path, rec.Version, true); herr == nil {
			s.markCompleted(rec.Version)
		}
	}
	return landed, false
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
		if err := s.settleVersion(ctx, f.Path, cur.Version); err != nil {
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
	if _, err := s.completeHistory(ctx, path, v, settling); err != nil {
		return err
	}
	s.markCompleted(v)
	return nil
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
			if _, err := s.completeHistory(ctx, r.Path, r.Version, true); err != nil {
				return nil, "", err
			}
			s.markCompleted(r.Version)
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
