package filestore

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Append implements driver.Appender under the exclusive lock, so
// concurrent appenders queue instead of conflicting. A file written by a
// tracked change has its receipt read first (Unsettled when pending). A receipt and a file
// are two files on disk, so it keeps the primitive path's evidence: the
// receipt is written pending (its version the new file's) before the file
// and completed after it; a crash in between leaves a pending receipt that
// the store settles by looking at the file's version, as on the primitive
// path. A history entry (p.History) is kept the same way: written
// pending before the file and completed (renamed) after it, all before
// Append returns, so a crash in between leaves a pending entry that the
// store confirms or drops by the file's version, and that the next change
// of the file completes (see completeReplaced). An expired file (its
// expiry at or before p.Now) counts as missing; the appended row, and its
// history entry, keep the replaced row's expiry and pin
// (driver.KeepLifetime).
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return driver.AppendResult{}, err
	}
	defer unlock()
	if p.Receipt != nil {
		ex, err := d.receipt(p.Receipt.ID)
		if err != nil || ex != nil {
			return driver.AppendResult{Existing: ex}, err
		}
	}
	cur, _, err := d.state(p.Path)
	if err != nil {
		return driver.AppendResult{}, err
	}
	if cur == nil || cur.Tombstone || driver.LifetimeOf(cur.Metadata).ExpiredBy(p.Now) {
		return driver.AppendResult{Missing: true}, nil // an expired file counts as gone
	}
	if cur.OperationID != "" {
		// The file may be the only evidence that its operation landed.
		r, err := d.receipt(cur.OperationID)
		if err != nil {
			return driver.AppendResult{}, err
		}
		if r != nil && !r.Completed && r.Version == cur.Version {
			return driver.AppendResult{Unsettled: cur.Version}, nil
		}
	}
	next := driver.AppendedContent(cur.Content, p.Entry)
	if utf8.RuneCountInString(next) > p.MaxChars {
		return driver.AppendResult{}, fmt.Errorf("filestore: %q would be over %d characters: %w", p.Path, p.MaxChars, driver.ErrTooLarge)
	}
	if err := d.completeReplaced(p.Path, cur.Version); err != nil {
		return driver.AppendResult{}, err
	}
	meta := driver.KeepLifetime(p.Metadata, cur.Metadata) // an append keeps the file's expiry and pin
	f := driver.File{Path: p.Path, Content: next, Version: p.Version, Metadata: meta}
	var entry historyRef
	if p.History != nil {
		h := *p.History
		h.Previous, h.Content, h.Metadata, h.Pending = cur.Version, next, meta, false
		if err := d.putHistory(h, true); err != nil {
			return driver.AppendResult{}, err
		}
		_, stem, _ := splitKey(h.Key())
		entry = historyRef{key: h.Key(), path: h.Path, name: entryName(stem, true), pending: true}
	}
	var pending driver.Receipt
	if p.Receipt != nil {
		pending = *p.Receipt
		pending.Expected, pending.Existed, pending.Completed = cur.Version, true, false
		pending.Version = p.Version
		if err := d.markReceipt(pending, nil); err != nil {
			return driver.AppendResult{}, err
		}
		if err := writeJSON(d.receiptPath(pending.ID), pending); err != nil {
			return driver.AppendResult{}, err
		}
		f.OperationID = pending.ID
	}
	if err := d.store(f, cur); err != nil {
		return driver.AppendResult{}, err
	}
	if p.History != nil {
		if err := d.completeHistory(entry); err != nil {
			return driver.AppendResult{}, err
		}
	}
	if p.Receipt != nil {
		done := pending
		done.Completed = true
		if err := d.markReceipt(done, &pending); err != nil {
			return driver.AppendResult{}, err
		}
		if err := writeJSON(d.receiptPath(done.ID), done); err != nil {
			return driver.AppendResult{}, err
		}
	}
	return driver.AppendResult{}, nil
}
