package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Mutate implements driver.Mutator in one round trip: one call of the
// function "<table>_mutate" (see the schema), which inserts the completed
// receipt, checks the version, applies the change and inserts
// p.History, if any, in one implicit transaction. It returns the existing receipt when the operation is
// known, and driver.ErrPrecondition (SQLSTATE [CodePrecondition], nothing
// written) when the version differs.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	meta, err := driver.MetadataJSON(p.Metadata)
	if err != nil {
		return driver.MutateResult{}, err
	}
	text, raw := contentArgs(p.Content)
	args := []any{string(p.Kind), p.Path, text, raw, meta, p.Expected, p.Version}
	if r := p.Receipt; r != nil {
		args = append(args, r.ID, r.Fingerprint, string(r.Kind), r.Path, r.Expected, r.Version, r.Existed, r.Completed, r.CreatedAt, r.ExpiresAt)
	} else {
		args = append(args, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
	}
	hist, err := historyArgs(p.History, p.Content)
	if err != nil {
		return driver.MutateResult{}, err
	}
	args = append(args, hist...)
	existing, err := d.mutate(ctx, args)
	if schemaMissing(err) {
		// The schema was dropped while this process ran (the function is
		// gone, so nothing was executed): create it again and retry once.
		if err = recreateSchema(ctx, d.pool, d.sql.table); err == nil {
			existing, err = d.mutate(ctx, args)
		}
	}
	if err != nil {
		return driver.MutateResult{}, d.mutateError(ctx, err)
	}
	if len(existing) > 0 {
		return driver.MutateResult{Existing: existing[0]}, nil
	}
	return driver.MutateResult{}, nil
}

func (d *Driver) mutate(ctx context.Context, args []any) ([]*driver.Receipt, error) {
	rows, err := d.pool.Query(ctx, d.sql.mutate, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*driver.Receipt, error) { return scanReceipt(row) })
}

func (d *Driver) mutateError(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	switch {
	case isPrecondition(err):
		return fmt.Errorf("%w: %w", driver.ErrPrecondition, err)
	case errors.As(err, &pe) && pe.Code == CodeCollision:
		return fmt.Errorf("%w: %w", driver.ErrPathCollision, err)
	}
	return fail(ctx, err)
}

// ChecksCollisions implements driver.CollisionChecker: the mutation
// function checks a create's path under advisory locks (see the schema),
// in the same statement as the receipt and the create.
func (d *Driver) ChecksCollisions() bool { return true }
