package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
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

// query runs the read-only statement q with args (texts and integers) on
// a pooled connection through the engine's own statement API, and read
// steps through its rows, reading the columns it wants with the
// statement's accessors (a text from ColumnRawText is valid until the
// next step). The listings use it: database/sql copies each value and
// then boxes it, two allocations a value, most of what listing a file's
// lifetime cost; here a page's texts are copied once, into one buffer
// (pageTexts).
func (d *Driver) query(ctx context.Context, q string, args []any, read func(st *sqlite3.Stmt) error) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fail(ctx, err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c := dc.(sqlitedriver.Conn).Raw()
		defer c.SetInterrupt(c.SetInterrupt(ctx))
		st, _, err := c.Prepare(q)
		if err != nil {
			return fail(ctx, err)
		}
		defer st.Close()
		for i, a := range args {
			switch v := a.(type) {
			case string:
				err = st.BindText(i+1, v)
			case int:
				err = st.BindInt64(i+1, int64(v))
			case int64:
				err = st.BindInt64(i+1, v)
			default:
				err = fmt.Errorf("sqlite: cannot bind a %T", a)
			}
			if err != nil {
				return fail(ctx, err)
			}
		}
		if err := read(st); err != nil {
			return err
		}
		return fail(ctx, st.Err())
	})
}

// fileAt reads the file columns (fileCols) of the statement's row from
// column col on.
func fileAt(st *sqlite3.Stmt, col int) (*driver.File, error) {
	f := driver.File{Path: st.ColumnText(col), Content: st.ColumnText(col + 1), Version: st.ColumnText(col + 2),
		OperationID: st.ColumnText(col + 3), Tombstone: st.ColumnInt64(col+5) != 0}
	var meta sql.NullString
	var expires sql.NullInt64
	if st.ColumnType(col+4) != sqlite3.NULL {
		meta = sql.NullString{String: st.ColumnText(col + 4), Valid: true}
	}
	if st.ColumnType(col+6) != sqlite3.NULL {
		expires = sql.NullInt64{Int64: st.ColumnInt64(col + 6), Valid: true}
	}
	return finishFile(&f, meta, expires)
}

// pageTexts gathers the texts of a page of rows in one buffer and returns
// them as substrings of one string: one allocation for the page instead
// of one a text. The strings of a page share their memory.
type pageTexts struct {
	buf  []byte
	ends []int
}

// add copies b in.
func (p *pageTexts) add(b []byte) {
	p.buf = append(p.buf, b...)
	p.ends = append(p.ends, len(p.buf))
}

// strings returns the texts in the order added.
func (p *pageTexts) strings() []string {
	s := string(p.buf)
	out := make([]string, len(p.ends))
	start := 0
	for i, end := range p.ends {
		out[i], start = s[start:end], end
	}
	return out
}

// addEntry adds the texts of a listing row: its path in column path, its
// lifetime in columns life and life+1 (lifetimeCols).
func (p *pageTexts) addEntry(st *sqlite3.Stmt, path, life int) {
	p.add(st.ColumnRawText(path))
	p.add(st.ColumnRawText(life))
	p.add(st.ColumnRawText(life + 1))
}

// fillEntries sets the path and lifetime of each entry from the texts
// added with addEntry, one row an entry in order.
func (p *pageTexts) fillEntries(out []driver.Entry) {
	strs := p.strings()
	for i := range out {
		out[i].Path, out[i].Lifetime = strs[3*i], driver.Lifetime{Expires: strs[3*i+1], Pinned: strs[3*i+2]}
	}
}
