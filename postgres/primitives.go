package postgres

import (
	"context"
	"errors"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
)

// GetFile implements driver.Driver.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	f, err := scanFile(d.pool.QueryRow(ctx, d.sql.getFile, path))
	if errors.Is(err, pgx.ErrNoRows) || tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return f, nil
}

// ListFiles implements driver.Driver: one range scan of the primary key,
// tombstones flagged, each entry's lifetime read from its metadata
// (metadata->>key) in the same statement.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	q, args := d.sql.listAll, []any{p.Prefix, p.After, clampInt32(p.Limit)}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.listFiles, append(args, end)
	}
	rows, err := d.pool.Query(ctx, q, args...)
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (driver.Entry, error) {
		var e driver.Entry
		err := row.Scan(&e.Path, &e.Tombstone, &e.Lifetime.Expires, &e.Lifetime.Pinned)
		return e, err
	})
	if tableMissing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return out, nil
}

// CreateFile implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	meta, err := driver.MetadataJSON(f.Metadata)
	if err != nil {
		return err
	}
	text, raw := contentArgs(f.Content)
	tag, err := d.pool.Exec(ctx, d.sql.createFile, f.Path, text, f.Version, f.OperationID, meta, f.Tombstone, timeArg(f.ExpiresAt), raw)
	return applied(ctx, tag, err)
}

// ReplaceFile implements driver.Driver (UPDATE … WHERE version = expected).
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	meta, err := driver.MetadataJSON(f.Metadata)
	if err != nil {
		return err
	}
	text, raw := contentArgs(f.Content)
	tag, err := d.pool.Exec(ctx, d.sql.replaceFile, f.Path, text, f.Version, f.OperationID, meta, f.Tombstone, timeArg(f.ExpiresAt), expected, raw)
	return applied(ctx, tag, err)
}

// DeleteFile implements driver.Driver (DELETE … WHERE version = expected).
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	tag, err := d.pool.Exec(ctx, d.sql.deleteFile, path, expected)
	return applied(ctx, tag, err)
}

// GetReceipt implements driver.Driver.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	r, err := scanReceipt(d.pool.QueryRow(ctx, d.sql.getReceipt, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fail(ctx, err)
	}
	return r, nil
}

// ReserveReceipt implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	tag, err := d.pool.Exec(ctx, d.sql.reserveReceipt, r.ID, r.Fingerprint, string(r.Kind), r.Path, r.Expected, r.Version, r.Existed, r.CreatedAt, r.ExpiresAt)
	return applied(ctx, tag, err)
}

// CompleteReceipt implements driver.Driver. The update applies to a pending
// receipt of the same version; when it matches nothing, a second statement
// (in a fresh snapshot) tells "already completed with this version", which
// succeeds, from any other state.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	tag, err := d.pool.Exec(ctx, d.sql.completeReceipt, r.ID, r.Version, r.Fingerprint, string(r.Kind), r.Path, r.Expected, r.Existed, r.CreatedAt, r.ExpiresAt)
	if err != nil || tag.RowsAffected() > 0 {
		return applied(ctx, tag, err)
	}
	var done bool
	if err := d.pool.QueryRow(ctx, d.sql.completedReceipt, r.ID, r.Version).Scan(&done); err != nil {
		return fail(ctx, err)
	}
	if !done {
		return driver.ErrPrecondition
	}
	return nil
}

// DropReceipt implements driver.Driver. When the delete matches nothing, a
// second statement tells a missing receipt (success) from one in another
// state.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	tag, err := d.pool.Exec(ctx, d.sql.dropReceipt, id, version)
	if err != nil || tag.RowsAffected() > 0 {
		return applied(ctx, tag, err)
	}
	var exists bool
	if err := d.pool.QueryRow(ctx, d.sql.receiptExists, id).Scan(&exists); err != nil {
		return fail(ctx, err)
	}
	if exists {
		return driver.ErrPrecondition
	}
	return nil
}
