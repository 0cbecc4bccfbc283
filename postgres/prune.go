package postgres

import (
	"context"
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
