package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
)

// errKnownReceipt rolls back a mutation whose operation is known.
var errKnownReceipt = errors.New("sqlite: operation already recorded")

// Mutate implements driver.Mutator in one BEGIN IMMEDIATE transaction:
// insert the completed receipt (an existing one is returned and nothing is
// written), then the conditional change, then the history entry
// (p.History, when the change was applied); a failed condition rolls the
// receipt back too and returns driver.ErrPrecondition.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	var res driver.MutateResult
	opID := ""
	if p.Receipt != nil {
		opID = p.Receipt.ID
	}
	var check func() error
	if p.Expected != "" {
		check = func() error { return d.precheck(ctx, p.Path, opID, p.Expected) }
	}
	err := d.inTxChecked(ctx, check, func(tx *sql.Tx) error {
		if p.Receipt != nil {
			err := d.insertReceipt(ctx, tx, *p.Receipt)
			if errors.Is(err, driver.ErrPrecondition) {
				if res.Existing, err = d.getReceipt(ctx, tx, p.Receipt.ID); err == nil {
					err = errKnownReceipt // nothing to commit
				}
			}
			if err != nil {
				return err
			}
		}
		if err := d.change(ctx, tx, p, opID); err != nil {
			return err
		}
		if p.History != nil && (p.Kind == driver.KindWrite || p.Expected != "") {
			// The change was applied (a delete of an absent path
			// changes nothing and records nothing).
			return d.recordHistory(ctx, tx, *p.History)
		}
		return nil
	})
	if errors.Is(err, errKnownReceipt) {
		return res, nil
	}
	return driver.MutateResult{}, err
}

// change makes the conditional change of a mutation in its transaction:
// driver.ErrPrecondition when its condition fails.
func (d *Driver) change(ctx context.Context, tx *sql.Tx, p driver.MutateParams, opID string) error {
	switch {
	case p.Kind == driver.KindDelete && p.Expected == "":
		var exists bool
		if err := tx.QueryRowContext(ctx, d.sql.fileExists, p.Path).Scan(&exists); err != nil {
			return fail(ctx, err)
		}
		if exists {
			return fmt.Errorf("sqlite: %q exists: %w", p.Path, driver.ErrPrecondition)
		}
		return nil
	case p.Kind == driver.KindDelete:
		r, err := tx.ExecContext(ctx, d.sql.deleteFile, p.Path, p.Expected)
		return applied(ctx, r, err)
	}
	f := driver.File{Path: p.Path, Content: p.Content, Version: p.Version, OperationID: opID, Metadata: p.Metadata}
	if p.Expected == "" {
		if err := d.createFile(ctx, tx, f); err != nil {
			return err
		}
		return d.collides(ctx, tx, p.Path)
	}
	return d.replaceFile(ctx, tx, f, p.Expected)
}

// ChecksCollisions implements driver.CollisionChecker: Mutate checks a
// create's path in its transaction, whose write lock keeps every other
// writer out until it commits.
func (d *Driver) ChecksCollisions() bool { return true }

// collides reports driver.ErrPathCollision when a file (not a tombstone)
// is a proper ancestor of path or lies below it: one statement in the
// mutation's transaction.
func (d *Driver) collides(ctx context.Context, q querier, path string) error {
	var anc []string
	for i := range len(path) {
		if path[i] == '/' {
			anc = append(anc, path[:i])
		}
	}
	list, err := json.Marshal(anc)
	if err != nil {
		return err
	}
	below := path + "/"
	end, _ := driver.PrefixEnd(below)
	var hit string
	err = q.QueryRowContext(ctx, d.sql.collision, string(list), below, end).Scan(&hit)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fail(ctx, err)
	}
	return fmt.Errorf("sqlite: %q collides with the file %q: %w", path, hit, driver.ErrPathCollision)
}
