package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5/pgconn"
)

// Append implements driver.Appender in one round trip: one call of the
// function "<table>_append" (see the schema), which inserts the completed
// receipt, locks the file's row, checks the bound, writes the appended
// content and inserts p.History (with the version replaced, the new
// content and the row's metadata) in one implicit transaction. Concurrent
// appends queue on the row lock for the length of that statement; none
// conflicts. A row written by an operation whose receipt is pending is
// refused (CodeUnsettled), so that the store completes that receipt
// first. A row whose expiry is at or before p.Now counts as missing
// (CodeMissing); otherwise the appended row and its history entry keep
// the replaced row's lifetime: their metadata is
// driver.KeepLifetime(p.Metadata, the row's metadata), the carrying done
// in the function on the row it locked.
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	// Without store-owned keys: the function adds the row's.
	args, err := callArgs(driver.KeepLifetime(p.Metadata, nil), p.Entry, func(text string, raw []byte, meta any) []any {
		return []any{p.Path, text, raw, driver.AppendSpace, p.MaxChars, meta, p.Version, p.Now}
	}, p.Receipt, p.History, false)
	if err != nil {
		return driver.AppendResult{}, err
	}
	existing, err := d.call(ctx, d.sql.append, args)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == CodeMissing:
		return driver.AppendResult{Missing: true}, nil
	case errors.As(err, &pe) && pe.Code == CodeUnsettled && pe.Detail != "":
		return driver.AppendResult{Unsettled: pe.Detail}, nil
	case errors.As(err, &pe) && pe.Code == CodeTooLarge:
		return driver.AppendResult{}, fmt.Errorf("postgres: %w: %w", driver.ErrTooLarge, err)
	case err != nil:
		return driver.AppendResult{}, fail(ctx, err)
	case len(existing) > 0:
		return driver.AppendResult{Existing: existing[0]}, nil
	}
	return driver.AppendResult{}, nil
}
