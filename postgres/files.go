package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// isPrecondition reports whether err is the mutation function's failed
// version check, by SQLSTATE.
func isPrecondition(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == CodePrecondition
}

// fail keeps a context error visible to errors.Is when pgx reports the
// interruption in its own words.
func fail(ctx context.Context, err error) error { return driver.ContextError(ctx, err) }

// applied maps a conditional statement's row count to the driver contract.
func applied(ctx context.Context, tag pgconn.CommandTag, err error) error {
	switch {
	case err != nil:
		return fail(ctx, err)
	case tag.RowsAffected() == 0:
		return driver.ErrPrecondition
	}
	return nil
}

// contentArgs returns the values of the content and content_bytes
// columns for s: text cannot hold NUL, so content with a NUL is kept whole
// as bytes, and its text shows each NUL as U+FFFD.
func contentArgs(s string) (string, []byte) {
	if strings.IndexByte(s, 0) < 0 {
		return s, nil
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD"), []byte(s)
}

// metadataArg is the JSON text of m, or NULL for none.
func metadataArg(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// timeArg is t, or NULL for the zero time.
func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// scanFile scans the file columns (fileCols), after the columns first
// scans into, if any.
func scanFile(row pgx.Row, first ...any) (*driver.File, error) {
	var f driver.File
	var meta *string
	var expires *time.Time
	var raw []byte
	if err := row.Scan(append(first, &f.Path, &f.Content, &raw, &f.Version, &f.OperationID, &meta, &f.Tombstone, &expires)...); err != nil {
		return nil, err
	}
	if raw != nil {
		f.Content = string(raw)
	}
	if meta != nil {
		if err := json.Unmarshal([]byte(*meta), &f.Metadata); err != nil {
			return nil, fmt.Errorf("postgres: metadata of %q: %w", f.Path, err)
		}
	}
	if expires != nil {
		f.ExpiresAt = *expires
	}
	return &f, nil
}

func scanReceipt(row pgx.Row) (*driver.Receipt, error) {
	var r driver.Receipt
	var kind string
	if err := row.Scan(&r.ID, &r.Fingerprint, &kind, &r.Path, &r.Expected, &r.Version, &r.Existed, &r.Completed, &r.CreatedAt, &r.ExpiresAt); err != nil {
		return nil, err
	}
	r.Kind = driver.Kind(kind)
	return &r, nil
}

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
// tombstones flagged.
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
		err := row.Scan(&e.Path, &e.Tombstone)
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

func clampInt32(n int) int {
	return min(n, math.MaxInt32)
}

// CreateFile implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	meta, err := metadataArg(f.Metadata)
	if err != nil {
		return err
	}
	text, raw := contentArgs(f.Content)
	tag, err := d.pool.Exec(ctx, d.sql.createFile, f.Path, text, f.Version, f.OperationID, meta, f.Tombstone, timeArg(f.ExpiresAt), raw)
	return applied(ctx, tag, err)
}

// ReplaceFile implements driver.Driver (UPDATE … WHERE version = expected).
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	meta, err := metadataArg(f.Metadata)
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
