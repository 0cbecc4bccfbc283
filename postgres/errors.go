package postgres

import (
	"context"
	"errors"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrInvalidTable reports a table name that is not 1–52 characters of
// [A-Za-z0-9_] starting with a letter or an underscore. Derived names
// ("<table>_receipts", "<table>_hist_exp", …) must stay within
// PostgreSQL's 63-byte limit, and the name is the only identifier
// interpolated into SQL.
var ErrInvalidTable = errors.New("postgres: invalid table name")

// isPrecondition reports whether err is the mutation function's failed
// version check, by SQLSTATE.
func isPrecondition(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == CodePrecondition
}

// fail keeps a context error visible to errors.Is when pgx reports the
// interruption in its own words.
func fail(ctx context.Context, err error) error { return driver.ContextError(ctx, err) }

// applied maps a conditional statement's row count to the driver contract.
func applied(ctx context.Context, tag pgconn.CommandTag, err error) error {
	switch {
	case err != nil:
		return fail(ctx, err)
	case tag.RowsAffected() == 0:
		return driver.ErrPrecondition
	}
	return nil
}

// schemaMissing reports an undefined function or table: the schema is gone.
func schemaMissing(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42883" || pe.Code == "42P01")
}

// tableMissing reports an undefined table: dropped while this process ran.
// A file read then finds no rows (the next mutation creates the schema
// again), so the store's checks before a create do not fail on it.
func tableMissing(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
