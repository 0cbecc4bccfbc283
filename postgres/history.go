package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
)

// historyArgs returns the history arguments of the mutation function
// (full: $18–$28; the history content is NULL when it is the mutation's
// content, which the function then uses) or of the append function
// ($13–$19: the function fills in the previous version, the content and
// the metadata, the appended row's); NULLs without an entry.
func historyArgs(e *driver.HistoryEntry, content string, full bool) ([]any, error) {
	if e == nil && full {
		return make([]any, 11), nil
	}
	if e == nil {
		return make([]any, 7), nil
	}
	if !full {
		return []any{e.Key(), e.Path, e.Version, string(e.Kind), e.OperationID, e.Time, timeArg(e.ExpiresAt)}, nil
	}
	meta, err := driver.MetadataJSON(e.Metadata)
	if err != nil {
		return nil, err
	}
	var text, raw any
	if e.Content != content {
		text, raw = contentArgs(e.Content)
	}
	return []any{e.Key(), e.Path, e.Version, e.Previous, string(e.Kind), e.OperationID, meta, text, raw, e.Time, timeArg(e.ExpiresAt)}, nil
}

// scanHistory scans the history columns (historyCols).
func scanHistory(row pgx.Row) (driver.HistoryEntry, error) {
	var e driver.HistoryEntry
	var kind string
	var meta *string
	var raw []byte
	var expires *time.Time
	if err := row.Scan(&e.Path, &e.Version, &e.Previous, &kind, &e.OperationID, &meta, &e.Content, &raw, &e.Time, &expires, &e.Pending); err != nil {
		return e, err
	}
	e.Kind = driver.Kind(kind)
	if raw != nil {
		e.Content = string(raw)
	}
	if meta != nil {
		if err := json.Unmarshal([]byte(*meta), &e.Metadata); err != nil {
			return e, fmt.Errorf("postgres: metadata of %q at %s: %w", e.Path, e.Version, err)
		}
	}
	if expires != nil {
		e.ExpiresAt = *expires
	}
	return e, nil
}

// PutHistory implements driver.Historian (INSERT … ON CONFLICT DO
// NOTHING on the entry's key).
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	meta, err := driver.MetadataJSON(e.Metadata)
	if err != nil {
		return err
	}
	text, raw := contentArgs(e.Content)
	tag, err := d.pool.Exec(ctx, d.sql.putHistory, e.Key(), e.Path, e.Version, e.Previous, string(e.Kind), e.OperationID, meta,
		text, raw, e.Time, timeArg(e.ExpiresAt), e.Pending)
	return applied(ctx, tag, err)
}

// CompleteHistory implements driver.Historian. The update applies to a
// pending entry; when it matches nothing, a second statement (in a fresh
// snapshot) tells an entry already complete, which succeeds, from a
// missing one.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	key := driver.HistoryKey(path, version)
	tag, err := d.pool.Exec(ctx, d.sql.completeHistory, key, version)
	if err != nil || tag.RowsAffected() > 0 {
		return applied(ctx, tag, err)
	}
	exists, err := d.historyExists(ctx, key, version)
	if err != nil {
		return err
	}
	if !exists {
		return driver.ErrPrecondition
	}
	return nil
}

// DropHistory implements driver.Historian. The delete applies to a
// pending entry; when it matches nothing, a second statement tells a
// missing entry (success) from a complete one.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	key := driver.HistoryKey(path, version)
	tag, err := d.pool.Exec(ctx, d.sql.dropHistory, key, version)
	if err != nil || tag.RowsAffected() > 0 {
		return applied(ctx, tag, err)
	}
	exists, err := d.historyExists(ctx, key, version)
	if err != nil {
		return err
	}
	if exists {
		return driver.ErrPrecondition
	}
	return nil
}

func (d *Driver) historyExists(ctx context.Context, key, version string) (bool, error) {
	var exists bool
	if err := d.pool.QueryRow(ctx, d.sql.historyExists, key, version).Scan(&exists); err != nil {
		return false, fail(ctx, err)
	}
	return exists, nil
}

// GetHistory implements driver.Historian: a point read of the primary
// key.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	e, err := scanHistory(d.pool.QueryRow(ctx, d.sql.getHistory, driver.HistoryKey(path, version), version))
	if errors.Is(err, pgx.ErrNoRows) || tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return &e, nil
}

// ListHistory implements driver.Historian: one range scan of the primary
// key over [prefix, end), after p.After, in key order.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	q, args := d.sql.listHistoryAll, []any{p.Prefix, p.After, clampInt32(p.Limit)}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.listHistory, append(args, end)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.HistoryEntry, error) { return scanHistory(row) })
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return out, nil
}

// DeleteHistory implements driver.Historian: statements of at most
// [DefaultPruneBatch] entries each (each its own transaction), taken in
// key order from the range of the primary key that the prefix covers,
// until one selects fewer.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	q, args := d.sql.deleteHistoryAll, []any{prefix, d.pruneBatch}
	if end, ok := driver.PrefixEnd(prefix); ok {
		q, args = d.sql.deleteHistoryBatch, append(args, end)
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var selected, deleted int
		err := d.pool.QueryRow(ctx, q, args...).Scan(&selected, &deleted)
		if tableMissing(err) {
			return total, nil
		}
		if err != nil {
			return total, fail(ctx, err)
		}
		total += deleted
		if d.pruneHook != nil {
			d.pruneHook()
		}
		if selected < d.pruneBatch {
			return total, nil
		}
	}
}
