// The atomic path: one driver.Mutator request checks the receipt, applies the
// change by compare-and-swap and records the completed receipt and history
// entry, after settling what a store without the Mutator left on the row.

package store

import (
	"context"
	"errors"

	"github.com/agentmem/agentmem/core/driver"
)

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
			done, _, err := s.settleHeld(ctx, c.op, ex)
			switch {
			case err != nil:
				return Mutation{}, err
			case done != nil:
				return replay(done), nil
			case round < maxReserveRounds:
				continue
			}
			return Mutation{}, c.contended()
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
