package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
)

// GetFile implements driver.Driver.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	f, err := scanFile(d.db.QueryRowContext(ctx, d.sql.getFile, path))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return f, nil
}

// ListFiles implements driver.Driver: one range scan of the primary key,
// tombstones flagged, each entry's lifetime read from the row's lifetime
// columns (lifetimeCols) in the same statement, through the engine's own
// API (query).
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	q, args := d.sql.listAll, []any{p.Prefix, p.After, p.Limit}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.listFiles, append(args, end)
	}
	var out []driver.Entry
	var texts pageTexts
	err := d.query(ctx, q, args, func(st *sqlite3.Stmt) error {
		for st.Step() {
			texts.addEntry(st, 0, 2)
			out = append(out, driver.Entry{Tombstone: st.ColumnInt64(1) != 0})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	texts.fillEntries(out)
	return out, nil
}

// CreateFile implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	return d.inTx(ctx, func(tx *sql.Tx) error { return d.createFile(ctx, tx, f) })
}

func (d *Driver) createFile(ctx context.Context, q querier, f driver.File) error {
	meta, err := driver.MetadataJSON(f.Metadata)
	if err != nil {
		return err
	}
	l := driver.LifetimeOf(f.Metadata)
	res, err := q.ExecContext(ctx, d.sql.createFile, f.Path, f.Content, f.Version, f.OperationID, meta, f.Tombstone, millis(f.ExpiresAt),
		l.Expires, l.Pinned)
	return applied(ctx, res, err)
}

// ReplaceFile implements driver.Driver (UPDATE … WHERE version = expected).
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	check := func() error { return d.precheck(ctx, f.Path, "", expected) }
	return d.inTxChecked(ctx, check, func(tx *sql.Tx) error { return d.replaceFile(ctx, tx, f, expected) })
}

func (d *Driver) replaceFile(ctx context.Context, q querier, f driver.File, expected string) error {
	meta, err := driver.MetadataJSON(f.Metadata)
	if err != nil {
		return err
	}
	l := driver.LifetimeOf(f.Metadata)
	res, err := q.ExecContext(ctx, d.sql.replaceFile, f.Path, f.Content, f.Version, f.OperationID, meta, f.Tombstone, millis(f.ExpiresAt),
		l.Expires, l.Pinned, expected)
	return applied(ctx, res, err)
}

// DeleteFile implements driver.Driver (DELETE … WHERE version = expected).
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	check := func() error { return d.precheck(ctx, path, "", expected) }
	return d.inTxChecked(ctx, check, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.deleteFile, path, expected)
		return applied(ctx, res, err)
	})
}

// GetReceipt implements driver.Driver.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	return d.getReceipt(ctx, d.db, id)
}

func (d *Driver) getReceipt(ctx context.Context, q querier, id string) (*driver.Receipt, error) {
	r, err := scanReceipt(q.QueryRowContext(ctx, d.sql.getReceipt, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return r, nil
}

// insertReceipt stores r unless its id exists (then ErrPrecondition).
func (d *Driver) insertReceipt(ctx context.Context, q querier, r driver.Receipt) error {
	res, err := q.ExecContext(ctx, d.sql.insertReceipt, r.ID, r.Fingerprint, string(r.Kind), r.Path, r.Expected, r.Version,
		r.Existed, r.Completed, r.CreatedAt.UnixMilli(), r.ExpiresAt.UnixMilli())
	return applied(ctx, res, err)
}

// ReserveReceipt implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	r.Completed = false
	return d.inTx(ctx, func(tx *sql.Tx) error { return d.insertReceipt(ctx, tx, r) })
}

// CompleteReceipt implements driver.Driver: in one transaction, complete
// the pending receipt of the same version, or find it already completed
// with that version (success), or fail with ErrPrecondition.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.completeReceipt, r.ID, r.Version, r.Fingerprint, string(r.Kind), r.Path, r.Expected,
			r.Existed, r.CreatedAt.UnixMilli(), r.ExpiresAt.UnixMilli())
		if err = applied(ctx, res, err); !errors.Is(err, driver.ErrPrecondition) {
			return err
		}
		var done bool
		if err := tx.QueryRowContext(ctx, d.sql.completedReceipt, r.ID, r.Version).Scan(&done); err != nil {
			return fail(ctx, err)
		}
		if !done {
			return driver.ErrPrecondition
		}
		return nil
	})
}

// DropReceipt implements driver.Driver: in one transaction, delete the
// pending receipt of the same version; a missing receipt succeeds, any
// other is ErrPrecondition.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	return d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.dropReceipt, id, version)
		if err = applied(ctx, res, err); !errors.Is(err, driver.ErrPrecondition) {
			return err
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, d.sql.receiptExists, id).Scan(&exists); err != nil {
			return fail(ctx, err)
		}
		if exists {
			return driver.ErrPrecondition
		}
		return nil
	})
}

// precheck fails a replace or delete whose expected version is already
// gone with driver.ErrPrecondition before it waits for the writer slot
// (inTxChecked runs it only when the slot is taken), so a
// compare-and-swap that lost a race never queues behind, or holds up, the
// writers that won (when the operation opID is unknown: a known one is
// answered in the transaction). A version that matches here is checked
// again in the transaction.
func (d *Driver) precheck(ctx context.Context, path, opID, expected string) error {
	var version string
	var known bool
	if err := d.db.QueryRowContext(ctx, d.sql.precheck, path, opID).Scan(&version, &known); err != nil {
		return fail(ctx, err)
	}
	if version != expected && !known {
		return fmt.Errorf("sqlite: %q is no longer at the expected version: %w", path, driver.ErrPrecondition)
	}
	return nil
}
