package firestore

import (
	"context"
	"errors"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/agentmem/agentmem/core/driver"
)

// getFile reads the file row at path with its snapshot, or nils when
// there is none.
func (d *Driver) getFile(ctx context.Context, path string) (*driver.File, *firestore.DocumentSnapshot, error) {
	if !storable(path) {
		return nil, nil, nil // no such row can exist
	}
	s, err := d.fileRef(path).Get(ctx)
	if notFound(err) {
		d.forget(path)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, "get file", err)
	}
	f, err := decodeFile(s)
	if err != nil {
		return nil, nil, err
	}
	d.saw(f, s)
	return f, s, nil
}

// GetFile implements driver.Driver with one document read.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	f, _, err := d.getFile(ctx, path)
	return f, err
}

// CreateFile implements driver.Driver with one Create (an exists=false
// precondition). On ALREADY_EXISTS it re-reads: a row carrying f.Version is
// this call's own write, re-sent by the client after a lost reply.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	data, err := d.fileData(f)
	if err != nil {
		return err
	}
	return create(ctx, "create file", d.fileRef(f.Path), data, func() (bool, error) {
		cur, _, err := d.getFile(ctx, f.Path)
		return cur != nil && cur.Version == f.Version, err
	})
}

// ReplaceFile implements driver.Driver: it reads the row and, when its
// version is expected, replaces it with an update-time precondition (two
// RPCs, no locks). If the precondition fails the row changed after the
// read: the next read finds either f.Version (this call's write, re-sent
// by the client after a lost reply) or another version.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	u, err := d.fileFields(f)
	if err != nil {
		return err
	}
	return guarded(ctx, "replace file", func(retried bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getFile(ctx, f.Path)
		switch {
		case err != nil:
			return 0, nil, err
		case retried && cur != nil && cur.Version == f.Version:
			return done, nil, nil
		case cur == nil || cur.Version != expected:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, updateAt(ctx, u))
}

// DeleteFile implements driver.Driver: it reads the row and, when its
// version is expected, deletes it with an update-time precondition. A
// failed precondition followed by a missing row is reported as an unknown
// outcome, not ErrPrecondition: the client may have re-sent a delete that
// had landed, and a delete leaves no evidence.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	return guarded(ctx, "delete file", func(retried bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getFile(ctx, path)
		switch {
		case err != nil:
			return 0, nil, err
		case retried && cur == nil:
			return unsure, nil, nil
		case cur == nil || cur.Version != expected:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, deleteAt(ctx))
}

// rangeQuery selects file rows with prefix whose path is ≥ from
// (> from when exclusive), ordered by path. Only documents with a path
// field match, so receipts never do; the single-field index on path that
// Firestore keeps automatically serves it.
func (d *Driver) rangeQuery(prefix, from string, exclusive bool) firestore.Query {
	op := ">="
	if exclusive {
		op = ">"
	}
	q := d.coll.Where(fPath, op, from)
	if end, ok := driver.PrefixEnd(prefix); ok {
		q = q.Where(fPath, "<", end)
	}
	return q.OrderBy(fPath, firestore.Asc)
}

// ListFiles implements driver.Driver with one query that returns only the
// path, tombstone and metadata fields (never the content): each entry's
// Lifetime comes from the metadata read in that query. Tombstones are
// returned flagged.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	if !storable(p.Prefix) {
		return nil, nil // every path under it is too long to be stored (or queried)
	}
	q := d.rangeQuery(p.Prefix, p.Prefix, false)
	if p.After >= p.Prefix && p.After != "" {
		q = d.rangeQuery(p.Prefix, p.After, true)
	}
	it := q.Select(fPath, fTombstone, fMetadata).Limit(p.Limit).Documents(ctx)
	defer it.Stop()
	var out []driver.Entry
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fail(ctx, "list files", err)
		}
		m := s.Data()
		life, err := lifetime(s, m)
		if err != nil {
			return nil, err
		}
		out = append(out, driver.Entry{Path: getString(m, fPath), Tombstone: getBool(m, fTombstone), Lifetime: life})
	}
}

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
