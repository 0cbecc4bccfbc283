package cosmosdb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// casRounds bounds the read-then-If-Match rounds of one conditional write.
// A round ends without writing only on a 412, so giving up reports the
// truth: nothing was written.
const casRounds = 3

// GetFile implements driver.Driver with one point read.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	f, _, err := d.readFile(ctx, path)
	return f, err
}

// readFile reads the row at path and its ETag, and caches both.
func (d *Driver) readFile(ctx context.Context, path string) (*driver.File, azcore.ETag, error) {
	pk := partitionOf(path)
	resp, err := d.c.ReadItem(ctx, key(pk), fileID(path), &azcosmos.ItemOptions{SessionToken: d.session(pk)})
	if statusOf(err) == 404 {
		d.files.Drop(path)
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	d.remember(pk, resp.SessionToken)
	f, err := decodeFile(resp.Value)
	if err != nil {
		return nil, "", err
	}
	if f.Path != path {
		return nil, "", fmt.Errorf("cosmosdb: item %s holds path %q, not %q", fileID(path), f.Path, path)
	}
	etag := etagOf(resp)
	d.files.Put(path, state{version: f.Version, etag: etag})
	return f, etag, nil
}

// createItem creates an item in partition pk; 409 Conflict is
// driver.ErrPrecondition.
func (d *Driver) createItem(ctx context.Context, pk string, body []byte) (azcore.ETag, error) {
	var resp azcosmos.ItemResponse
	err := d.send(ctx, func(ctx context.Context) error {
		var err error
		resp, err = d.c.CreateItem(ctx, key(pk), body, nil)
		return err
	})
	switch {
	case err == nil:
		d.remember(pk, resp.SessionToken)
		return resp.ETag, nil
	case statusOf(err) == 409:
		return "", precondition(err)
	default:
		return "", failure(err)
	}
}

// CreateFile implements driver.Driver with one CreateItem; 409 Conflict is
// driver.ErrPrecondition.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	body, err := encodeFile(f, time.Now())
	if err != nil {
		return err
	}
	etag, err := d.createItem(ctx, partitionOf(f.Path), body)
	if err != nil {
		d.files.Drop(f.Path)
		return err
	}
	d.files.Put(f.Path, state{version: f.Version, etag: etag})
	return nil
}

// ReplaceFile implements driver.Driver: one ReplaceItem with If-Match on
// the cached ETag when the cached version is the expected one, else a read
// to check the version first. A 412 after a cached ETag reads the row again
// to decide: still the expected version → retry with the fresh ETag;
// otherwise driver.ErrPrecondition.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	body, err := encodeFile(f, time.Now())
	if err != nil {
		return err
	}
	pk, id := partitionOf(f.Path), fileID(f.Path)
	return d.conditional(ctx, f.Path, expected, func(ctx context.Context, etag azcore.ETag) error {
		resp, err := d.c.ReplaceItem(ctx, key(pk), id, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(pk, resp.SessionToken)
			d.files.Put(f.Path, state{version: f.Version, etag: resp.ETag})
		}
		return err
	})
}

// DeleteFile implements driver.Driver like ReplaceFile, with DeleteItem.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	pk, id := partitionOf(path), fileID(path)
	return d.conditional(ctx, path, expected, func(ctx context.Context, etag azcore.ETag) error {
		resp, err := d.c.DeleteItem(ctx, key(pk), id, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(pk, resp.SessionToken)
			d.files.Drop(path)
		}
		return err
	})
}

// conditional runs write (a request with If-Match on the given ETag) on
// the row at path only if the row's version is expected.
func (d *Driver) conditional(ctx context.Context, path, expected string, write func(context.Context, azcore.ETag) error) error {
	st, cached := d.files.Get(path)
	look := func(ctx context.Context) (azcore.ETag, bool, error) {
		f, etag, err := d.readFile(ctx, path)
		switch {
		case err != nil:
			return "", true, err
		case f == nil:
			return "", true, errAbsent
		case f.Version != expected:
			return "", true, errVersion
		}
		return etag, false, nil
	}
	return d.ifMatch(ctx, st.etag, cached && st.version == expected, look, write, precondition, func() { d.files.Drop(path) })
}

// ifMatch runs write with If-Match on an ETag until it applies or a
// condition fails. etag is the cached ETag, used first when cached is set;
// otherwise, and after each 412, look reads the item and either returns
// its ETag or stops with the result to return. gone maps a 404 answer to
// write; forget drops the cache entry. A round ends without a write only
// on a 412, so giving up is driver.ErrPrecondition: nothing was written.
func (d *Driver) ifMatch(ctx context.Context, etag azcore.ETag, cached bool,
	look func(context.Context) (azcore.ETag, bool, error),
	write func(context.Context, azcore.ETag) error,
	gone func(error) error, forget func()) error {
	cached = cached && etag != ""
	for range casRounds {
		if !cached {
			fresh, stop, err := look(ctx)
			if stop {
				return err
			}
			if fresh == "" {
				return errNoETag // an empty If-Match would be no condition at all
			}
			etag = fresh
		}
		err := d.send(ctx, func(ctx context.Context) error { return write(ctx, etag) })
		switch statusOf(err) {
		case 0:
			if err != nil {
				forget()
			}
			return err
		case 412:
			cached = false // look again
		case 404:
			forget()
			return gone(err)
		default:
			forget()
			return failure(err)
		}
	}
	return errContended
}

// GetReceipt implements driver.Driver. A receipt lives in its own
// partition (the primitive path) or in its file's partition (written by
// Mutate). It reads the partition remembered for the operation, if any,
// with one point read; otherwise one point read of the receipt's own
// partition and, when that finds nothing, one cross-partition query on
// the (always indexed) id. The store calls it on the atomic path only
// when a Mutate was refused and for Store.GetOperation.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	if pk, ok := d.receiptParts.Get(id); ok {
		if r, err := d.readReceiptIn(ctx, pk, id); err != nil || r != nil {
			return r, err
		}
	}
	r, _, err := d.readReceipt(ctx, id)
	if err != nil || r != nil {
		return r, err
	}
	rows, err := d.query(ctx, nil, "SELECT * FROM c WHERE c.id = @id", []azcosmos.QueryParameter{param("@id", receiptID(id))}, 0)
	if err != nil {
		return nil, err
	}
	for _, b := range rows {
		r, err := decodeReceipt(b, id)
		if err != nil {
			return nil, err
		}
		var it struct {
			PK string `json:"pk"`
		}
		if json.Unmarshal(b, &it) == nil && it.PK != "" {
			d.receiptParts.Put(id, it.PK)
		}
		return r, nil
	}
	return nil, nil
}

// readReceiptIn reads the receipt of operation id that Mutate wrote in
// partition pk, or nil.
func (d *Driver) readReceiptIn(ctx context.Context, pk, id string) (*driver.Receipt, error) {
	rid := receiptID(id)
	resp, err := d.c.ReadItem(ctx, key(pk), rid, &azcosmos.ItemOptions{SessionToken: d.session(pk)})
	if statusOf(err) == 404 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d.remember(pk, resp.SessionToken)
	d.receiptParts.Put(id, pk)
	return decodeReceipt(resp.Value, id)
}

func (d *Driver) readReceipt(ctx context.Context, id string) (*driver.Receipt, azcore.ETag, error) {
	rid := receiptID(id)
	resp, err := d.c.ReadItem(ctx, key(rid), rid, &azcosmos.ItemOptions{SessionToken: d.session(rid)})
	if statusOf(err) == 404 {
		d.receipts.Drop(id)
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	d.remember(rid, resp.SessionToken)
	r, err := decodeReceipt(resp.Value, id)
	if err != nil {
		return nil, "", err
	}
	etag := etagOf(resp)
	d.receipts.Put(id, state{version: r.Version, completed: r.Completed, etag: etag})
	return r, etag, nil
}

// ReserveReceipt implements driver.Driver with one CreateItem; 409
// Conflict is driver.ErrPrecondition.
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	body, err := encodeReceipt(r, receiptID(r.ID), time.Now())
	if err != nil {
		return err
	}
	etag, err := d.createItem(ctx, receiptID(r.ID), body)
	if err != nil {
		d.receipts.Drop(r.ID)
		return err
	}
	d.receipts.Put(r.ID, state{version: r.Version, completed: r.Completed, etag: etag})
	return nil
}

// CompleteReceipt implements driver.Driver: one ReplaceItem with If-Match
// on the ETag cached when the receipt was reserved or read; otherwise (or
// after a 412) a read decides.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	body, err := encodeReceipt(r, receiptID(r.ID), time.Now())
	if err != nil {
		return err
	}
	rid := receiptID(r.ID)
	return d.receiptCAS(ctx, r.ID, r.Version, true, func(ctx context.Context, etag azcore.ETag) error {
		resp, err := d.c.ReplaceItem(ctx, key(rid), rid, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(rid, resp.SessionToken)
			d.receipts.Put(r.ID, state{version: r.Version, completed: true, etag: resp.ETag})
		}
		return err
	})
}

// DropReceipt implements driver.Driver like CompleteReceipt, with
// DeleteItem.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	rid := receiptID(id)
	return d.receiptCAS(ctx, id, version, false, func(ctx context.Context, etag azcore.ETag) error {
		resp, err := d.c.DeleteItem(ctx, key(rid), rid, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(rid, resp.SessionToken)
			d.receipts.Drop(id)
		}
		return err
	})
}

// receiptCAS runs write (a request with If-Match) on receipt id only if it
// is pending with version. For a completion (complete set), a receipt
// already completed with version is success and a missing one a failed
// condition; for a drop, a missing receipt is success.
func (d *Driver) receiptCAS(ctx context.Context, id, version string, complete bool, write func(context.Context, azcore.ETag) error) error {
	st, cached := d.receipts.Get(id)
	look := func(ctx context.Context) (azcore.ETag, bool, error) {
		r, etag, err := d.readReceipt(ctx, id)
		switch {
		case err != nil:
			return "", true, err
		case r == nil && complete:
			return "", true, errAbsent
		case r == nil:
			return "", true, nil
		case r.Version != version:
			return "", true, errReceiptState
		case r.Completed && complete:
			return "", true, nil
		case r.Completed:
			return "", true, errReceiptState
		}
		return etag, false, nil
	}
	gone := func(err error) error {
		if complete {
			return precondition(err)
		}
		return nil
	}
	return d.ifMatch(ctx, st.etag, cached && !st.completed && st.version == version, look, write, gone, func() { d.receipts.Drop(id) })
}

// listRow is one row of a listing query.
type listRow struct {
	Path string `json:"path"`
	Tomb bool   `json:"tomb"`
	Meta string `json:"meta"`
}

// ListFiles implements driver.Driver. A prefix holding "/" lies in one
// partition (its first segment): one single-partition query, ordered by
// path, reading only the rows under the prefix. A prefix without "/" (""
// or part of a first segment) may span partitions: it fans out over all
// of them without ORDER BY (which a cross-partition query through the
// gateway cannot do), reads every row under the prefix after p.After and
// sorts in Go. Either query selects the path, the tombstone flag and the
// metadata (never the content): each entry's Lifetime comes from the
// metadata of its row.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	where := []string{"c.type = @type", "STARTSWITH(c.path, @prefix)"}
	params := []azcosmos.QueryParameter{param("@type", typeFile), param("@prefix", p.Prefix)}
	if p.After != "" {
		where = append(where, "c.path > @after")
		params = append(params, param("@after", p.After))
	}
	pk, single := prefixPartition(p.Prefix)
	var sql string
	if single {
		// The partition key is filtered in WHERE as well: a server that
		// ignores the request's partition scope still answers correctly.
		where = append([]string{"c.pk = @pk"}, where...)
		params = append(params, param("@pk", pk))
		sql = fmt.Sprintf("SELECT TOP %d c.path, c.tomb, c.meta FROM c WHERE %s ORDER BY c.path ASC", p.Limit, strings.Join(where, " AND "))
	} else {
		sql = "SELECT c.path, c.tomb, c.meta FROM c WHERE " + strings.Join(where, " AND ")
	}
	var key *string
	limit := 0
	if single {
		key, limit = &pk, p.Limit
	}
	rows, err := d.query(ctx, key, sql, params, limit)
	if err != nil {
		return nil, err
	}
	out := make([]driver.Entry, 0, len(rows))
	for _, b := range rows {
		r, err := decodeRow[listRow](b)
		if err != nil {
			return nil, err
		}
		life, err := lifetimeOf(r.Meta, r.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, driver.Entry{Path: r.Path, Tombstone: r.Tomb, Lifetime: life})
	}
	slices.SortFunc(out, func(a, b driver.Entry) int { return strings.Compare(a.Path, b.Path) })
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}
