package memstore

import (
	"container/heap"
	"context"
	"time"
)

// expiry is a min-heap of (time, row) pairs: when each receipt and
// tombstone may be pruned. Entries are hints: a row that changed since its
// entry was pushed is checked again when the entry comes up, so a prune
// costs what expired (plus stale entries that expired), never a scan of
// every row.
type expiry []expiryEntry

type expiryEntry struct {
	at   time.Time
	kind rowKind
	key  string // receipt id, path, or history key
}

// rowKind says which rows an expiry entry names.
type rowKind uint8

const (
	tombstoneRow rowKind = iota
	receiptRow
	historyRow
)

func (h expiry) Len() int           { return len(h) }
func (h expiry) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiry) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiry) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiry) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// add records that the row may be pruned after at (a zero time never).
func (h *expiry) add(at time.Time, kind rowKind, key string) {
	if !at.IsZero() {
		heap.Push(h, expiryEntry{at: at, kind: kind, key: key})
	}
}

// next pops the earliest entry that expired before now.
func (h *expiry) next(now time.Time) (expiryEntry, bool) {
	if len(*h) == 0 || !(*h)[0].at.Before(now) {
		return expiryEntry{}, false
	}
	return heap.Pop(h).(expiryEntry), true
}

// PruneExpired implements driver.Pruner. It removes the receipts and
// tombstones that expired before now in batches of [DefaultPruneBatch],
// releasing the mutex between batches, and costs what expired: an expiry
// heap names the candidates, never a scan of every row.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, more, err := d.pruneBatchOnce(now)
		n += k
		if err != nil || !more {
			return n, err
		}
		if d.pruneHook != nil {
			d.pruneHook()
		}
	}
}

// pruneBatchOnce takes up to d.pruneBatch due entries of the expiry heap
// under the mutex, removes the rows that did expire, and reports whether
// more may remain.
func (d *Driver) pruneBatchOnce(now time.Time) (int, bool, error) {
	if err := d.lock(); err != nil {
		return 0, false, err
	}
	defer d.mu.Unlock()
	n := 0
	for range max(1, d.pruneBatch) {
		e, ok := d.expiry.next(now)
		if !ok {
			return n, false, nil
		}
		switch e.kind {
		case receiptRow:
			if r, ok := d.receipts[e.key]; ok && !r.ExpiresAt.IsZero() && r.ExpiresAt.Before(now) {
				delete(d.receipts, e.key)
				n++
			}
		case historyRow:
			if h, ok := d.history[e.key]; ok && !h.ExpiresAt.IsZero() && h.ExpiresAt.Before(now) {
				d.removeHistory(e.key)
				n++
			}
		default:
			if f, ok := d.files[e.key]; ok && f.Tombstone && !f.ExpiresAt.IsZero() && f.ExpiresAt.Before(now) {
				d.remove(e.key)
				n++
			}
		}
	}
	return n, true, nil
}
