package sqlite

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
)

// ReadSnapshot implements driver.SnapshotReader: the file and the listing
// page in one statement (a point read and a range scan of the primary key,
// joined by UNION ALL), each entry with its lifetime (the row's lifetime
// columns, lifetimeCols), read through the engine's own API (query).
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	q, args := d.sql.snapshotAll, []any{p.List.Prefix, p.List.After, p.List.Limit, p.Path}
	if end, ok := driver.PrefixEnd(p.List.Prefix); ok {
		q, args = d.sql.snapshot, append(args, end)
	}
	var file *driver.File
	var out []driver.Entry
	var texts pageTexts
	err := d.query(ctx, q, args, func(st *sqlite3.Stmt) error {
		for st.Step() {
			if st.ColumnInt64(0) == 1 {
				f, err := fileAt(st, 3)
				if err != nil {
					return err
				}
				file = f
				continue
			}
			texts.addEntry(st, 3, 1)
			out = append(out, driver.Entry{Tombstone: st.ColumnInt64(8) != 0})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	texts.fillEntries(out)
	// UNION ALL keeps each arm's order in SQLite; sorting again costs
	// nothing and assumes nothing (as driver.CollectSnapshot does).
	slices.SortFunc(out, func(a, b driver.Entry) int { return strings.Compare(a.Path, b.Path) })
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
// row's lifetime columns (lifetimeCols) in the same statement, through
// the engine's own API (query). SQLite's
// substr() stops at a NUL, so a prefix shorter than both that bound and
// the file's size (octet_length, read from the record header) is read
// again whole: only files holding a NUL cost that second query.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	q, args := d.sql.readAll, []any{p.Prefix, min(int64(p.MaxChars), math.MaxInt32) + 1, p.Limit}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.readScope, append(args, end)
	}
	var out []driver.ScopeFile
	var cutByNUL []int
	var texts pageTexts // path, version, lifetime
	err := d.query(ctx, q, args, func(st *sqlite3.Stmt) error {
		for st.Step() {
			var f driver.ScopeFile
			f.Content, f.Truncated = driver.CutRunes(st.ColumnText(1), p.MaxChars)
			if !f.Truncated && int64(len(f.Content)) < st.ColumnInt64(2) {
				cutByNUL = append(cutByNUL, len(out))
			}
			texts.add(st.ColumnRawText(0))
			texts.add(st.ColumnRawText(3))
			texts.add(st.ColumnRawText(4))
			texts.add(st.ColumnRawText(5))
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	strs := texts.strings()
	for i := range out {
		out[i].Path, out[i].Version = strs[4*i], strs[4*i+1]
		out[i].Lifetime = driver.Lifetime{Expires: strs[4*i+2], Pinned: strs[4*i+3]}
	}
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
