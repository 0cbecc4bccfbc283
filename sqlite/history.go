package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// History entries live in "<table>_history", one row per entry under its
// driver.HistoryKey (the primary key, whose BINARY order is the order
// ListHistory returns), with the path and the whole version beside it: a
// key holds only the version's time-ordered stem, so point operations
// match the version too. Metadata is JSON text as for files; times are
// Unix milliseconds, NULL for a zero time.

// putHistory inserts e unless its key exists (then ErrPrecondition).
func (d *Driver) putHistory(ctx context.Context, q querier, e driver.HistoryEntry) error {
	meta, err := driver.MetadataJSON(e.Metadata)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, d.sql.putHistory, e.Key(), e.Path, e.Version, e.Previous, string(e.Kind), e.OperationID,
		meta, e.Content, millis(e.Time), millis(e.ExpiresAt), e.Pending)
	return applied(ctx, res, err)
}

// recordHistory stores the entry of a change made in the same transaction
// (Mutate, Append). Its key is already taken only if the store repeated a
// version, which it never does; that is reported as a plain error, not as
// a failed condition of the change, and rolls the change back.
func (d *Driver) recordHistory(ctx context.Context, q querier, e driver.HistoryEntry) error {
	err := d.putHistory(ctx, q, e)
	if errors.Is(err, driver.ErrPrecondition) {
		return fmt.Errorf("sqlite: the history of %q already has an entry with key %q", e.Path, e.Key())
	}
	return err
}

// scanHistory scans the history columns (historyCols).
func scanHistory(row scanner) (*driver.HistoryEntry, error) {
	var e driver.HistoryEntry
	var kind string
	var meta sql.NullString
	var at, expires sql.NullInt64
	if err := row.Scan(&e.Path, &e.Version, &e.Previous, &kind, &e.OperationID, &meta, &e.Content, &at, &expires, &e.Pending); err != nil {
		return nil, err
	}
	e.Kind = driver.Kind(kind)
	if meta.Valid {
		if err := json.Unmarshal([]byte(meta.String), &e.Metadata); err != nil {
			return nil, fmt.Errorf("sqlite: metadata of the history entry %q of %q: %w", e.Version, e.Path, err)
		}
	}
	if at.Valid {
		e.Time = time.UnixMilli(at.Int64)
	}
	if expires.Valid {
		e.ExpiresAt = time.UnixMilli(expires.Int64)
	}
	return &e, nil
}

// PutHistory implements driver.Historian (INSERT … ON CONFLICT DO
// NOTHING).
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	return d.inTx(ctx, func(tx *sql.Tx) error { return d.putHistory(ctx, tx, e) })
}

// CompleteHistory implements driver.Historian: one UPDATE of the entry's
// pending flag. SQLite counts a row the UPDATE matched even when its value
// does not change, so no row means no entry.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.completeHistory, driver.HistoryKey(path, version), version)
		return applied(ctx, res, err)
	})
}

// DropHistory implements driver.Historian: in one transaction, delete the
// pending entry; a missing entry succeeds, a complete one is
// ErrPrecondition.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	key := driver.HistoryKey(path, version)
	return d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.dropHistory, key, version)
		if err = applied(ctx, res, err); !errors.Is(err, driver.ErrPrecondition) {
			return err
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, d.sql.historyExists, key, version).Scan(&exists); err != nil {
			return fail(ctx, err)
		}
		if exists {
			return fmt.Errorf("sqlite: the history entry %q of %q is complete: %w", version, path, driver.ErrPrecondition)
		}
		return nil
	})
}

// GetHistory implements driver.Historian: a point read of the primary key.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	e, err := scanHistory(d.db.QueryRowContext(ctx, d.sql.getHistory, driver.HistoryKey(path, version), version))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return e, nil
}

// ListHistory implements driver.Historian: one ordered range search of the
// primary key over [prefix, end), as ListFiles does for paths.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	q, args := d.sql.listHistoryAll, []any{p.Prefix, p.After, p.Limit}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.listHistory, append(args, end)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, err)
	}
	defer rows.Close()
	var out []driver.HistoryEntry
	for rows.Next() {
		e, err := scanHistory(rows)
		if err != nil {
			return nil, fail(ctx, err)
		}
		out = append(out, *e)
	}
	return out, fail(ctx, rows.Err())
}

// DeleteHistory implements driver.Historian: [DefaultPruneBatch] entries
// of the key range [prefix, end) per transaction, each holding the writer
// slot for itself alone, until a batch comes back short. Unlike a prune,
// each batch is committed durably: an erasure that returned stays done.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	q, end := d.sql.deleteHistoryAll, any(nil)
	if e, ok := driver.PrefixEnd(prefix); ok {
		q, end = d.sql.deleteHistory, e
	}
	return driver.PruneBatches(ctx, d.pruneBatch, func(ctx context.Context) (int, error) {
		var n int64
		err := d.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q, prefix, end, d.pruneBatch)
			if err != nil {
				return fail(ctx, err)
			}
			n, err = res.RowsAffected()
			return err
		})
		if err == nil && d.pruneHook != nil {
			d.pruneHook()
		}
		return int(n), err
	})
}
