package memstore

import (
	"container/heap"
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
