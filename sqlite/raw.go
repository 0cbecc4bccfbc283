package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

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
