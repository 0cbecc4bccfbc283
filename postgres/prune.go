package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// DefaultPruneBatch is how many rows one statement of
// [Driver.PruneExpired] deletes.
const DefaultPruneBatch = 1000

// PruneExpired implements driver.Pruner: it deletes the receipts, the
// tombstones and the history entries whose expires_at is before now, [DefaultPruneBatch] rows per
// statement (each its own transaction), found through the expires_at
// indexes. Rows a concurrent writer holds are skipped, never waited for;
// the next prune removes them.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	batch := func(q string) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var n int
			if err := d.pool.QueryRow(ctx, q, now, d.pruneBatch).Scan(&n); err != nil {
				return 0, fail(ctx, err)
			}
			if d.pruneHook != nil {
				d.pruneHook()
			}
			return n, nil
		}
	}
	return driver.PruneBatches(ctx, d.pruneBatch, batch(d.sql.pruneReceiptBatch), batch(d.sql.pruneTombBatch), batch(d.sql.pruneHistoryBatch))
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
		return 0, errors.New("postgres: PruneReceipts needs a positive age")
	}
	tag, err := d.pool.Exec(ctx, d.sql.pruneReceipts, time.Now().Add(-olderThan))
	if err != nil {
		return 0, fail(ctx, err)
	}
	return int(tag.RowsAffected()), nil
}
