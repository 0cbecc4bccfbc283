package sqlite

import (
	"context"
	"database/sql"
	sqldrv "database/sql/driver"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// DefaultPruneBatch is how many rows [Driver.PruneExpired] deletes per
// transaction.
const DefaultPruneBatch = 100

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
