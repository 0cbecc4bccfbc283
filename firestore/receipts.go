package firestore

import (
	"context"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

// getReceipt reads the receipt of operation id with its snapshot, or nils
// when there is none.
func (d *Driver) getReceipt(ctx context.Context, id string) (*driver.Receipt, *firestore.DocumentSnapshot, error) {
	s, err := d.receiptRef(id).Get(ctx)
	if notFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, "get receipt", err)
	}
	r, _, err := decodeReceipt(s, id)
	if err != nil {
		return nil, nil, err
	}
	return r, s, nil
}

// GetReceipt implements driver.Driver with one document read.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	r, _, err := d.getReceipt(ctx, id)
	return r, err
}

// ReserveReceipt implements driver.Driver with one Create. On
// ALREADY_EXISTS it re-reads: a pending receipt with r.Version is this
// call's own, re-sent by the client after a lost reply.
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	return create(ctx, "reserve receipt", d.receiptRef(r.ID), receiptData(r), func() (bool, error) {
		cur, _, err := d.getReceipt(ctx, r.ID)
		return cur != nil && !cur.Completed && cur.Version == r.Version, err
	})
}

// CompleteReceipt implements driver.Driver: a read, then an update-time
// conditional replace. The outcome is decided on the state read, so a
// failed precondition just means "read again"; a receipt already completed
// with r.Version succeeds, whoever completed it.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	return guarded(ctx, "complete receipt", func(bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getReceipt(ctx, r.ID)
		switch {
		case err != nil:
			return 0, nil, err
		case cur == nil || cur.Version != r.Version:
			return refused, nil, nil
		case cur.Completed:
			return done, nil, nil
		}
		return proceed, snap, nil
	}, updateAt(ctx, receiptFields(r)))
}

// DropReceipt implements driver.Driver: a read, then an update-time
// conditional delete. A receipt that is gone counts as dropped (a missing
// receipt is not an error), whoever removed it.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	return guarded(ctx, "drop receipt", func(bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getReceipt(ctx, id)
		switch {
		case err != nil:
			return 0, nil, err
		case cur == nil:
			return done, nil, nil
		case cur.Completed || cur.Version != version:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, deleteAt(ctx))
}

// receiptFields lists every field of r's document for an Update.
func receiptFields(r driver.Receipt) []firestore.Update {
	m := receiptData(r)
	u := make([]firestore.Update, 0, len(m)+1)
	for k, v := range m {
		u = append(u, firestore.Update{Path: k, Value: v})
	}
	return append(u, firestore.Update{Path: fAttempt, Value: firestore.Delete}, firestore.Update{Path: fReceipt, Value: firestore.Delete})
}
