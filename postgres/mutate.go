package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5/pgconn"
)

// Mutate implements driver.Mutator in one round trip: one call of the
// function "<table>_mutate" (see the schema), which inserts the completed
// receipt, checks the version, applies the change and inserts
// p.History, if any, in one implicit transaction. It returns the existing receipt when the operation is
// known, and driver.ErrPrecondition (SQLSTATE [CodePrecondition], nothing
// written) when the version differs.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	args, err := callArgs(p.Metadata, p.Content, func(text string, raw []byte, meta any) []any {
		return []any{string(p.Kind), p.Path, text, raw, meta, p.Expected, p.Version}
	}, p.Receipt, p.History, true)
	if err != nil {
		return driver.MutateResult{}, err
	}
	existing, err := d.call(ctx, d.sql.mutate, args)
	if err != nil {
		return driver.MutateResult{}, d.mutateError(ctx, err)
	}
	if len(existing) > 0 {
		return driver.MutateResult{Existing: existing[0]}, nil
	}
	return driver.MutateResult{}, nil
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
