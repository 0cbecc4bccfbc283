package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

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
	meta, err := metadataArg(p.Metadata)
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

// ReadSnapshot implements driver.SnapshotReader: the file and the listing
// page in one statement (a point read and a range scan of the primary key,
// joined by UNION ALL).
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	q, args := d.sql.snapshotAll, []any{p.List.Prefix, p.List.After, clampInt32(p.List.Limit), p.Path}
	if end, ok := driver.PrefixEnd(p.List.Prefix); ok {
		q, args = d.sql.snapshot, append(args, end)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if tableMissing(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, err)
	}
	defer rows.Close()
	var file *driver.File
	var out []driver.Entry
	for rows.Next() {
		var isFile bool
		f, err := scanFile(rows, &isFile)
		if err != nil {
			return nil, nil, fail(ctx, err)
		}
		if isFile {
			file = f
		} else {
			out = append(out, driver.Entry{Path: f.Path, Tombstone: f.Tombstone})
		}
	}
	if err := rows.Err(); tableMissing(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fail(ctx, err)
	}
	// UNION ALL keeps each arm's order here; sorting again assumes nothing.
	slices.SortFunc(out, func(a, b driver.Entry) int { return strings.Compare(a.Path, b.Path) })
	return file, out, nil
}

// GetFiles implements driver.BatchGetter: one query, path = ANY($1).
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	rows, err := d.pool.Query(ctx, d.sql.getFiles, paths)
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*driver.File, error) { return scanFile(row) })
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader: one range scan of the primary
// key over [prefix, end), keeping files with no "/" after the prefix, each
// cut by left() to MaxChars+1 characters; the extra character, if any,
// tells that the file is longer.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	chars := min(p.MaxChars, math.MaxInt32/4-1) + 1
	q, args := d.sql.readAll, []any{p.Prefix, chars, clampInt32(p.Limit), 4 * chars}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.readScope, append(args, end)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.ScopeFile, error) {
		var f driver.ScopeFile
		var text *string
		var raw []byte
		if err := row.Scan(&f.Path, &text, &raw); err != nil {
			return f, err
		}
		if text != nil {
			f.Content = *text
		} else {
			f.Content = string(raw) // whole characters up to the bound, see the SQL
		}
		f.Content, f.Truncated = driver.CutRunes(f.Content, p.MaxChars)
		return f, nil
	})
	if err != nil {
		return nil, fail(ctx, err)
	}
	return out, nil
}

// PruneExpired implements driver.Pruner: it deletes the receipts, the
// tombstones and the history entries whose expires_at is before now, [DefaultPruneBatch] rows per
// statement (each its own transaction), found through the expires_at
// indexes. Rows a concurrent writer holds are skipped, never waited for;
// the next prune removes them.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	batch := func(q string) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var n int
			if err := d.pool.QueryRow(ctx, q, now, d.pruneBatch).Scan(&n); err != nil {
				return 0, fail(ctx, err)
			}
			if d.pruneHook != nil {
				d.pruneHook()
			}
			return n, nil
		}
	}
	return driver.PruneBatches(ctx, d.pruneBatch, batch(d.sql.pruneReceiptBatch), batch(d.sql.pruneTombBatch), batch(d.sql.pruneHistoryBatch))
}

// PruneReceipts deletes the completed receipts created more than
// olderThan ago (by the local clock) and returns how many it removed. A
// pending receipt is never deleted: it is the only record of an attempt
// that may still land, and a replay settles it (the store's PruneExpired
// removes it once its retention has passed). A replay of a pruned
// operation applies it anew, so keep olderThan well above the longest
// retry window of your agents. It fails when olderThan is not positive.
//
// Deprecated: set store.Options.ReceiptRetention and call
// store.Store.PruneExpired, which prunes through driver.Pruner on every
// backend.
func (d *Driver) PruneReceipts(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan <= 0 {
		return 0, errors.New("postgres: PruneReceipts needs a positive age")
	}
	tag, err := d.pool.Exec(ctx, d.sql.pruneReceipts, time.Now().Add(-olderThan))
	if err != nil {
		return 0, fail(ctx, err)
	}
	return int(tag.RowsAffected()), nil
}
