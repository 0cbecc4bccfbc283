package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Append implements driver.Appender in one round trip: one call of the
// function "<table>_append" (see the schema), which inserts the completed
// receipt, locks the file's row, checks the bound, writes the appended
// content and inserts p.History (with the version replaced and the new
// content) in one implicit transaction. Concurrent appends queue on the
// row lock for the length of that statement; none conflicts. A row
// written by an operation whose receipt is pending is refused
// (CodeUnsettled), so that the store completes that receipt first.
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	meta, err := driver.MetadataJSON(p.Metadata)
	if err != nil {
		return driver.AppendResult{}, err
	}
	text, raw := contentArgs(p.Entry)
	args := []any{p.Path, text, raw, driver.AppendSpace, p.MaxChars, meta, p.Version}
	if r := p.Receipt; r != nil {
		args = append(args, r.ID, r.Fingerprint, r.CreatedAt, r.ExpiresAt)
	} else {
		args = append(args, nil, nil, nil, nil)
	}
	hist, err := appendHistoryArgs(p.History)
	if err != nil {
		return driver.AppendResult{}, err
	}
	args = append(args, hist...)
	existing, err := d.appendRows(ctx, args)
	if schemaMissing(err) {
		// The schema was dropped (or predates the append function): create
		// it again and retry once; nothing was executed.
		if err = recreateSchema(ctx, d.pool, d.sql.table); err == nil {
			existing, err = d.appendRows(ctx, args)
		}
	}
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

func (d *Driver) appendRows(ctx context.Context, args []any) ([]*driver.Receipt, error) {
	rows, err := d.pool.Query(ctx, d.sql.append, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*driver.Receipt, error) { return scanReceipt(row) })
}
