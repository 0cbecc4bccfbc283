package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Append implements driver.Appender in one BEGIN IMMEDIATE transaction:
// look up the receipt, read the file, and write the appended file, its
// history entry (p.History, with Previous and Content filled in) and the
// completed receipt. The transaction holds SQLite's write lock from its
// first statement, so nothing can change the file between the read and
// the write: an append never conflicts, never retries, and holds the
// writer slot for those four statements only (five with history). The read
// of the file also tells whether the operation that wrote it has its
// receipt pending (Unsettled then, nothing written), and brings its
// metadata: a row whose expiry is at or before p.Now counts as Missing,
// and the appended row and its history entry keep the replaced row's
// lifetime (driver.KeepLifetime).
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	var res driver.AppendResult
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		if p.Receipt != nil {
			r, err := d.getReceipt(ctx, tx, p.Receipt.ID)
			if err != nil {
				return err
			}
			if r != nil {
				res.Existing = r
				return errKnownReceipt // nothing to commit
			}
		}
		var unsettled bool
		cur, err := scanFile(tx.QueryRowContext(ctx, d.sql.appendFile, p.Path), &unsettled)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res.Missing = true
			return errKnownReceipt
		case err != nil:
			return fail(ctx, err)
		case cur.Tombstone, driver.LifetimeOf(cur.Metadata).ExpiredBy(p.Now):
			res.Missing = true
			return errKnownReceipt
		}
		if unsettled {
			// The file is the only evidence that its operation landed.
			res.Unsettled = cur.Version
			return errKnownReceipt
		}
		next := driver.AppendedContent(cur.Content, p.Entry)
		if utf8.RuneCountInString(next) > p.MaxChars {
			return fmt.Errorf("sqlite: %q would be over %d characters: %w", p.Path, p.MaxChars, driver.ErrTooLarge)
		}
		meta := driver.KeepLifetime(p.Metadata, cur.Metadata)
		f := driver.File{Path: p.Path, Content: next, Version: p.Version, Metadata: meta}
		if p.Receipt != nil {
			f.OperationID = p.Receipt.ID
		}
		if err := d.replaceFile(ctx, tx, f, cur.Version); err != nil {
			return err
		}
		if p.History != nil {
			h := *p.History
			h.Previous, h.Content, h.Metadata = cur.Version, next, meta
			if err := d.recordHistory(ctx, tx, h); err != nil {
				return err
			}
		}
		if p.Receipt == nil {
			return nil
		}
		r := *p.Receipt
		r.Expected, r.Existed = cur.Version, true
		return d.insertReceipt(ctx, tx, r)
	})
	if errors.Is(err, errKnownReceipt) {
		return res, nil
	}
	return driver.AppendResult{}, err
}
