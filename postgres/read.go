package postgres

import (
	"context"
	"math"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
)

// ReadSnapshot implements driver.SnapshotReader: the file and the listing
// page in one statement (a point read and a range scan of the primary key,
// joined by UNION ALL), each entry with its lifetime (metadata->>key).
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
	// UNION ALL keeps each arm's order here; CollectSnapshot sorts again,
	// which assumes nothing.
	file, out, err := driver.CollectSnapshot(rows, func(isFile *bool, l *driver.Lifetime) (*driver.File, error) {
		return scanFile(rows, isFile, &l.Expires, &l.Pinned)
	})
	if tableMissing(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, err)
	}
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
// tells that the file is longer. Each file's lifetime is read from its
// metadata (metadata->>key) in the same statement.
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
		if err := row.Scan(&f.Path, &text, &raw, &f.Version, &f.Lifetime.Expires, &f.Lifetime.Pinned); err != nil {
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
