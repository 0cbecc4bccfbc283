package memstore

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Append implements driver.Appender under the mutex.
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	if err := d.lock(); err != nil {
		return driver.AppendResult{}, err
	}
	defer d.mu.Unlock()
	if p.Receipt != nil {
		if r, ok := d.receipts[p.Receipt.ID]; ok {
			return driver.AppendResult{Existing: &r}, nil
		}
	}
	cur, ok := d.files[p.Path]
	if !ok || cur.Tombstone || driver.LifetimeOf(cur.Metadata).ExpiredBy(p.Now) {
		return driver.AppendResult{Missing: true}, nil
	}
	if r, ok := d.receipts[cur.OperationID]; ok && cur.OperationID != "" && !r.Completed && r.Version == cur.Version {
		return driver.AppendResult{Unsettled: cur.Version}, nil
	}
	next := driver.AppendedContent(cur.Content, p.Entry)
	if utf8.RuneCountInString(next) > p.MaxChars {
		return driver.AppendResult{}, fmt.Errorf("memstore: %q would be over %d characters: %w", p.Path, p.MaxChars, driver.ErrTooLarge)
	}
	meta := driver.KeepLifetime(p.Metadata, cur.Metadata)
	d.put(driver.File{Path: p.Path, Content: next, Version: p.Version, Metadata: meta, OperationID: receiptID(p.Receipt)})
	if p.Receipt != nil {
		r := *p.Receipt
		r.Expected, r.Existed = cur.Version, true
		d.putReceipt(r)
	}
	if p.History != nil {
		h := *p.History
		h.Previous, h.Content, h.Metadata = cur.Version, next, meta
		d.putHistory(h)
	}
	return driver.AppendResult{}, nil
}
