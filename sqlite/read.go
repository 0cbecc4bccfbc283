package sqlite

import (
	"context"
	"encoding/json"
	"math"

	"github.com/agentmem/agentmem/core/driver"
)

// ReadSnapshot implements driver.SnapshotReader: the file and the listing
// page in one statement (a point read and a range scan of the primary key,
// joined by UNION ALL), each entry with its lifetime (the row's lifetime
// columns, lifetimeCols).
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	q, args := d.sql.snapshotAll, []any{p.List.Prefix, p.List.After, p.List.Limit, p.Path}
	if end, ok := driver.PrefixEnd(p.List.Prefix); ok {
		q, args = d.sql.snapshot, append(args, end)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fail(ctx, err)
	}
	defer rows.Close()
	// UNION ALL keeps each arm's order in SQLite; CollectSnapshot sorts
	// again, which costs nothing and assumes nothing.
	file, out, err := driver.CollectSnapshot(rows, func(isFile *bool, l *driver.Lifetime) (*driver.File, error) {
		return scanFile(rows, isFile, &l.Expires, &l.Pinned)
	})
	if err != nil {
		return nil, nil, fail(ctx, err)
	}
	return file, out, nil
}

// GetFiles implements driver.BatchGetter: one query, the paths bound as
// one JSON array (path IN (SELECT value FROM json_each(?))).
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	list, err := json.Marshal(paths)
	if err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, d.sql.getFiles, string(list))
	if err != nil {
		return nil, fail(ctx, err)
	}
	defer rows.Close()
	var out []*driver.File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, fail(ctx, err)
		}
		out = append(out, f)
	}
	return out, fail(ctx, rows.Err())
}

// ReadScope implements driver.ScopeReader: one range scan of the primary
// key over [prefix, end), keeping files with no "/" after the prefix, each
// cut by substr() to MaxChars+1 characters; the extra character, if any,
// tells that the file is longer; each file's lifetime is read from the
// row's lifetime columns (lifetimeCols) in the same statement. SQLite's
// substr() stops at a NUL, so a prefix shorter than both that bound and
// the file's size (octet_length, read from the record header) is read
// again whole: only files holding a NUL cost that second query.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	q, args := d.sql.readAll, []any{p.Prefix, min(int64(p.MaxChars), math.MaxInt32) + 1, p.Limit}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.readScope, append(args, end)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, err)
	}
	defer rows.Close()
	var out []driver.ScopeFile
	var cutByNUL []int
	for rows.Next() {
		var f driver.ScopeFile
		var size int
		if err := rows.Scan(&f.Path, &f.Content, &size, &f.Version, &f.Lifetime.Expires, &f.Lifetime.Pinned); err != nil {
			return nil, fail(ctx, err)
		}
		f.Content, f.Truncated = driver.CutRunes(f.Content, p.MaxChars)
		if !f.Truncated && len(f.Content) < size {
			cutByNUL = append(cutByNUL, len(out))
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, err)
	}
	rows.Close()
	for _, i := range cutByNUL {
		f, err := d.GetFile(ctx, out[i].Path)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out[i].Content, out[i].Truncated = driver.CutRunes(f.Content, p.MaxChars)
		}
	}
	return out, nil
}
