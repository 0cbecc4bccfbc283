package firestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// Mutate implements driver.Mutator with one read-write transaction of at
// most two documents: it reads the file row and the receipt together
// (locking both), then writes the file change and the completed receipt,
// or nothing. Three RPCs: BeginTransaction, BatchGetDocuments, Commit (a
// failed version check rolls back instead of committing).
//
// The client runs the transaction function again after ABORTED, which may
// follow a Commit that it re-sent after UNAVAILABLE and that had landed.
// The function therefore recognises its own earlier commit: a receipt
// holding this call's attempt token, or a file row holding p.Version. A
// plain delete (no receipt) leaves no such evidence, so once a commit has
// been attempted a mismatch is reported as an unknown outcome, never as
// ErrPrecondition.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	m, err := d.newMutation(p)
	if err != nil {
		return driver.MutateResult{}, err
	}
	err = d.client.RunTransaction(ctx, m.run, firestore.MaxAttempts(d.maxAttempts))
	switch {
	case err == nil:
		return m.res, nil
	case errors.Is(err, driver.ErrPrecondition), errors.Is(err, errUnknown), errors.Is(err, driver.ErrTooLarge):
		return driver.MutateResult{}, err
	}
	return driver.MutateResult{}, fail(ctx, "mutate", err)
}

// mutation is one Mutate call: its parameters, documents and the state
// that survives the client's re-runs of the transaction function.
type mutation struct {
	p        driver.MutateParams
	file     *firestore.DocumentRef // nil: the path cannot hold a row
	receipt  *firestore.DocumentRef // nil without a receipt
	data     map[string]any         // the new file row (writes)
	attempt  string                 // token stored in the receipt
	attempts int                    // commits attempted so far
	res      driver.MutateResult
}

func (d *Driver) newMutation(p driver.MutateParams) (*mutation, error) {
	m := &mutation{p: p}
	if p.Kind == driver.KindWrite {
		opID := ""
		if p.Receipt != nil {
			opID = p.Receipt.ID
		}
		var err error
		m.data, err = d.fileData(driver.File{Path: p.Path, Content: p.Content, Version: p.Version, OperationID: opID, Metadata: p.Metadata})
		if err != nil {
			return nil, err
		}
	}
	if storable(p.Path) {
		m.file = d.fileRef(p.Path)
	}
	if p.Receipt != nil {
		m.receipt = d.receiptRef(p.Receipt.ID)
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
		m.attempt = hex.EncodeToString(b[:])
	}
	return m, nil
}

// run is the transaction function. It must stay correct when the client
// calls it again after an aborted (or re-sent) commit.
func (m *mutation) run(_ context.Context, tx *firestore.Transaction) error {
	m.res = driver.MutateResult{}
	var refs []*firestore.DocumentRef
	if m.file != nil {
		refs = append(refs, m.file)
	}
	if m.receipt != nil {
		refs = append(refs, m.receipt)
	}
	var snaps []*firestore.DocumentSnapshot
	if len(refs) > 0 {
		var err error
		if snaps, err = tx.GetAll(refs); err != nil {
			return err
		}
	}
	var fileSnap, receiptSnap *firestore.DocumentSnapshot
	if m.file != nil {
		fileSnap, snaps = snaps[0], snaps[1:]
	}
	if m.receipt != nil {
		receiptSnap = snaps[0]
	}

	if receiptSnap != nil && receiptSnap.Exists() {
		r, attempt, err := decodeReceipt(receiptSnap, m.p.Receipt.ID)
		if err != nil {
			return err
		}
		if attempt != m.attempt {
			m.res.Existing = r
		}
		return nil // an empty commit: the receipt answers, nothing is written
	}
	var cur *driver.File
	if fileSnap != nil && fileSnap.Exists() {
		var err error
		if cur, err = decodeFile(fileSnap); err != nil {
			return err
		}
	}
	if m.p.Kind == driver.KindWrite && cur != nil && cur.Version == m.p.Version {
		return nil // this call's earlier commit landed
	}
	if cur == nil && m.p.Expected != "" || cur != nil && cur.Version != m.p.Expected {
		if m.attempts > 0 && m.p.Kind == driver.KindDelete && m.receipt == nil {
			return errUnknown
		}
		return fmt.Errorf("firestore: mutate %q: %w", m.p.Path, driver.ErrPrecondition)
	}

	switch {
	case m.p.Kind == driver.KindWrite && cur == nil:
		if err := tx.Create(m.file, m.data); err != nil {
			return err
		}
	case m.p.Kind == driver.KindWrite:
		if err := tx.Set(m.file, m.data); err != nil {
			return err
		}
	case cur != nil:
		if err := tx.Delete(m.file); err != nil {
			return err
		}
	}
	if m.receipt != nil {
		if err := tx.Create(m.receipt, receiptData(*m.p.Receipt, m.attempt)); err != nil {
			return err
		}
	}
	m.attempts++
	return nil
}
