package memstore

import (
	"context"
	"maps"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
)

// putHistory stores e under its key; the caller holds mu.
func (d *Driver) putHistory(e driver.HistoryEntry) {
	k := e.Key()
	e.Metadata = maps.Clone(e.Metadata)
	if _, ok := d.history[k]; !ok {
		d.hkeys.insert(k)
	}
	d.history[k] = e
	d.expiry.add(e.ExpiresAt, historyRow, k)
}

// removeHistory removes the entry with key k; the caller holds mu.
func (d *Driver) removeHistory(k string) {
	delete(d.history, k)
	d.hkeys.remove(k)
}

// copyEntry returns a copy of e that shares no map with the driver.
func copyEntry(e driver.HistoryEntry) *driver.HistoryEntry {
	e.Metadata = maps.Clone(e.Metadata)
	return &e
}

// PutHistory implements driver.Historian.
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if _, ok := d.history[e.Key()]; ok {
		return driver.ErrPrecondition
	}
	d.putHistory(e)
	return nil
}

// CompleteHistory implements driver.Historian.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	k := driver.HistoryKey(path, version)
	e, ok := d.history[k]
	if !ok || e.Version != version {
		return driver.ErrPrecondition
	}
	e.Pending = false
	d.history[k] = e
	return nil
}

// DropHistory implements driver.Historian.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	k := driver.HistoryKey(path, version)
	e, ok := d.history[k]
	switch {
	case !ok || e.Version != version:
		return nil
	case !e.Pending:
		return driver.ErrPrecondition
	}
	d.removeHistory(k)
	return nil
}

// GetHistory implements driver.Historian.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	e, ok := d.history[driver.HistoryKey(path, version)]
	if !ok || e.Version != version {
		return nil, nil
	}
	return copyEntry(e), nil
}

// ListHistory implements driver.Historian: a walk of the ordered keys
// from the page's start, costing what it returns.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	start := max(p.Prefix, p.After)
	var out []driver.HistoryEntry
	for n := d.hkeys.seek(start); n != nil && len(out) < p.Limit; n = n.next[0] {
		if !strings.HasPrefix(n.key, p.Prefix) {
			break
		}
		if n.key == p.After {
			continue
		}
		out = append(out, *copyEntry(d.history[n.key]))
	}
	return out, nil
}

// DeleteHistory implements driver.Historian, in batches of
// DefaultPruneBatch entries per hold of the mutex.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, more, err := d.deleteHistoryBatch(prefix)
		n += k
		if err != nil || !more {
			return n, err
		}
	}
}

func (d *Driver) deleteHistoryBatch(prefix string) (int, bool, error) {
	if err := d.lock(); err != nil {
		return 0, false, err
	}
	defer d.mu.Unlock()
	var keys []string
	for n := d.hkeys.seek(prefix); n != nil && len(keys) < max(1, d.pruneBatch); n = n.next[0] {
		if !strings.HasPrefix(n.key, prefix) {
			break
		}
		keys = append(keys, n.key)
	}
	for _, k := range keys {
		d.removeHistory(k)
	}
	return len(keys), len(keys) == max(1, d.pruneBatch), nil
}
