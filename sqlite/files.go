package sqlite

import (
	"context"
	"database/sql"
	sqldrv "database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// millis is t as Unix milliseconds, or NULL for the zero time.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// metadataText is the JSON text of m, or NULL for none.
func metadataText(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanFile scans the file columns (fileCols), after the columns first
// scans into, if any.
func scanFile(row scanner, first ...any) (*driver.File, error) {
	var f driver.File
	var meta sql.NullString
	var expires sql.NullInt64
	if err := row.Scan(append(first, &f.Path, &f.Content, &f.Version, &f.OperationID, &meta, &f.Tombstone, &expires)...); err != nil {
		return nil, err
	}
	if meta.Valid {
		if err := json.Unmarshal([]byte(meta.String), &f.Metadata); err != nil {
			return nil, fmt.Errorf("sqlite: metadata of %q: %w", f.Path, err)
		}
	}
	if expires.Valid {
		f.ExpiresAt = time.UnixMilli(expires.Int64)
	}
	return &f, nil
}

func scanReceipt(row scanner) (*driver.Receipt, error) {
	var r driver.Receipt
	var kind string
	var created, expires int64
	if err := row.Scan(&r.ID, &r.Fingerprint, &kind, &r.Path, &r.Expected, &r.Version, &r.Existed, &r.Completed, &created, &expires); err != nil {
		return nil, err
	}
	r.Kind, r.CreatedAt, r.ExpiresAt = driver.Kind(kind), time.UnixMilli(created), time.UnixMilli(expires)
	return &r, nil
}

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
// tombstones flagged.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	q, args := d.sql.listAll, []any{p.Prefix, p.After, p.Limit}
	if end, ok := driver.PrefixEnd(p.Prefix); ok {
		q, args = d.sql.listFiles, append(args, end)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fail(ctx, err)
	}
	defer rows.Close()
	var out []driver.Entry
	for rows.Next() {
		var e driver.Entry
		if err := rows.Scan(&e.Path, &e.Tombstone); err != nil {
			return nil, fail(ctx, err)
		}
		out = append(out, e)
	}
	return out, fail(ctx, rows.Err())
}

// CreateFile implements driver.Driver (INSERT … ON CONFLICT DO NOTHING).
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	return d.inTx(ctx, func(tx *sql.Tx) error { return d.createFile(ctx, tx, f) })
}

func (d *Driver) createFile(ctx context.Context, q querier, f driver.File) error {
	meta, err := metadataText(f.Metadata)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, d.sql.createFile, f.Path, f.Content, f.Version, f.OperationID, meta, f.Tombstone, millis(f.ExpiresAt))
	return applied(ctx, res, err)
}

// ReplaceFile implements driver.Driver (UPDATE … WHERE version = expected).
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	check := func() error { return d.precheck(ctx, f.Path, "", expected) }
	return d.inTxChecked(ctx, check, func(tx *sql.Tx) error { return d.replaceFile(ctx, tx, f, expected) })
}

func (d *Driver) replaceFile(ctx context.Context, q querier, f driver.File, expected string) error {
	meta, err := metadataText(f.Metadata)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, d.sql.replaceFile, f.Path, f.Content, f.Version, f.OperationID, meta, f.Tombstone, millis(f.ExpiresAt), expected)
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

// errKnownReceipt rolls back a mutation whose operation is known.
var errKnownReceipt = errors.New("sqlite: operation already recorded")

// Mutate implements driver.Mutator in one BEGIN IMMEDIATE transaction:
// insert the completed receipt (an existing one is returned and nothing is
// written), then the conditional change, then the history entry
// (p.History, when the change was applied); a failed condition rolls the
// receipt back too and returns driver.ErrPrecondition.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	var res driver.MutateResult
	opID := ""
	if p.Receipt != nil {
		opID = p.Receipt.ID
	}
	var check func() error
	if p.Expected != "" {
		check = func() error { return d.precheck(ctx, p.Path, opID, p.Expected) }
	}
	err := d.inTxChecked(ctx, check, func(tx *sql.Tx) error {
		if p.Receipt != nil {
			err := d.insertReceipt(ctx, tx, *p.Receipt)
			if errors.Is(err, driver.ErrPrecondition) {
				if res.Existing, err = d.getReceipt(ctx, tx, p.Receipt.ID); err == nil {
					err = errKnownReceipt // nothing to commit
				}
			}
			if err != nil {
				return err
			}
		}
		if err := d.change(ctx, tx, p, opID); err != nil {
			return err
		}
		if p.History != nil && (p.Kind == driver.KindWrite || p.Expected != "") {
			// The change was applied (a delete of an absent path
			// changes nothing and records nothing).
			return d.recordHistory(ctx, tx, *p.History)
		}
		return nil
	})
	if errors.Is(err, errKnownReceipt) {
		return res, nil
	}
	return driver.MutateResult{}, err
}

// change makes the conditional change of a mutation in its transaction:
// driver.ErrPrecondition when its condition fails.
func (d *Driver) change(ctx context.Context, tx *sql.Tx, p driver.MutateParams, opID string) error {
	switch {
	case p.Kind == driver.KindDelete && p.Expected == "":
		var exists bool
		if err := tx.QueryRowContext(ctx, d.sql.fileExists, p.Path).Scan(&exists); err != nil {
			return fail(ctx, err)
		}
		if exists {
			return fmt.Errorf("%q exists: %w", p.Path, driver.ErrPrecondition)
		}
		return nil
	case p.Kind == driver.KindDelete:
		r, err := tx.ExecContext(ctx, d.sql.deleteFile, p.Path, p.Expected)
		return applied(ctx, r, err)
	}
	f := driver.File{Path: p.Path, Content: p.Content, Version: p.Version, OperationID: opID, Metadata: p.Metadata}
	if p.Expected == "" {
		if err := d.createFile(ctx, tx, f); err != nil {
			return err
		}
		return d.collides(ctx, tx, p.Path)
	}
	return d.replaceFile(ctx, tx, f, p.Expected)
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

// ChecksCollisions implements driver.CollisionChecker: Mutate checks a
// create's path in its transaction, whose write lock keeps every other
// writer out until it commits.
func (d *Driver) ChecksCollisions() bool { return true }

// collides reports driver.ErrPathCollision when a file (not a tombstone)
// is a proper ancestor of path or lies below it: one statement in the
// mutation's transaction.
func (d *Driver) collides(ctx context.Context, q querier, path string) error {
	var anc []string
	for i := range len(path) {
		if path[i] == '/' {
			anc = append(anc, path[:i])
		}
	}
	list, err := json.Marshal(anc)
	if err != nil {
		return err
	}
	below := path + "/"
	end, _ := driver.PrefixEnd(below)
	var hit string
	err = q.QueryRowContext(ctx, d.sql.collision, string(list), below, end).Scan(&hit)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fail(ctx, err)
	}
	return fmt.Errorf("sqlite: %q collides with the file %q: %w", path, hit, driver.ErrPathCollision)
}

// ReadSnapshot implements driver.SnapshotReader: the file and the listing
// page in one statement (a point read and a range scan of the primary key,
// joined by UNION ALL).
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
	var file *driver.File
	var out []driver.Entry
	for rows.Next() {
		var isFile bool
		f, err := scanFile(rows, &isFile)
		if err != nil {
			return nil, nil, fail(ctx, err)
		}
		if isFile {
			file = f
		} else {
			out = append(out, driver.Entry{Path: f.Path, Tombstone: f.Tombstone})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fail(ctx, err)
	}
	// UNION ALL keeps each arm's order in SQLite; sorting again costs
	// nothing and assumes nothing.
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
// tells that the file is longer. SQLite's substr() stops at a NUL, so a
// prefix shorter than both that bound and the file's size (octet_length,
// read from the record header) is read again whole: only files holding a
// NUL cost that second query.
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
		if err := rows.Scan(&f.Path, &f.Content, &size); err != nil {
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

// PruneExpired implements driver.Pruner: it deletes the receipts, the
// tombstones and the history entries whose expires_at is before now, [DefaultPruneBatch] rows per
// transaction, found through the expires_at indexes. Each batch takes the
// writer slot once, so a concurrent write waits for one batch at most.
// The batches commit without waiting for the disk (synchronous=NORMAL on
// the connection that prunes): a prune lost to a power cut is redone by
// the next one, and the next durable commit flushes it anyway.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return 0, fail(ctx, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous=NORMAL`); err != nil {
		return 0, fail(ctx, err)
	}
	defer func() {
		// The connection goes back to the pool as every other: durable.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous=FULL`); err != nil {
			_ = conn.Raw(func(any) error { return sqldrv.ErrBadConn }) // discard it
		}
	}()
	batch := func(q string) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			n, err := d.pruneBatchTx(ctx, conn, q, now)
			if err == nil && d.pruneHook != nil {
				d.pruneHook()
			}
			return int(n), err
		}
	}
	return driver.PruneBatches(ctx, d.pruneBatch, batch(d.sql.pruneReceipts), batch(d.sql.pruneTombstones), batch(d.sql.pruneHistory))
}

// pruneBatchTx runs one prune statement in its own transaction on conn,
// holding the writer slot for it alone.
func (d *Driver) pruneBatchTx(ctx context.Context, conn *sql.Conn, q string, now time.Time) (int64, error) {
	release, err := d.lockWriter(ctx)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	defer func() {
		release()
		if d.pruneHold != nil {
			d.pruneHold(time.Since(began))
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, fail(ctx, err)
	}
	res, err := tx.ExecContext(ctx, q, now.UnixMilli(), d.pruneBatch)
	if err != nil {
		_ = tx.Rollback()
		return 0, fail(ctx, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		_ = tx.Rollback()
		return 0, err
	}
	return n, fail(ctx, tx.Commit())
}

// PruneReceipts deletes the completed receipts created more than
// olderThan ago (by the local clock) and returns how many it removed. A
// pending receipt is never deleted: it is the only record of an attempt
// that may still land, and a replay settles it (the store's PruneExpired
// removes it once its retention has passed). A replay of a pruned
// operation applies it anew, so keep olderThan well above the longest
// retry window of your agents. It fails when olderThan is not positive.
//
// Deprecated: set store.Options.ReceiptRetention and call
// store.Store.PruneExpired, which prunes through driver.Pruner on every
// backend.
func (d *Driver) PruneReceipts(ctx context.Context, olderThan time.Duration) (int, error) {
	if olderThan <= 0 {
		return 0, errors.New("sqlite: PruneReceipts needs a positive age")
	}
	var n int64
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.sql.receiptsBefore, time.Now().Add(-olderThan).UnixMilli())
		if err != nil {
			return fail(ctx, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
