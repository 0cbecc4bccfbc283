package cosmosdb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// errBatch reports a batch that failed for a reason other than its
// conditions; its outcome is known (nothing was applied), but it is not a
// failed condition either.
var errBatch = errors.New("cosmosdb: transactional batch refused")

// Mutate implements driver.Mutator with ONE TransactionalBatch in the
// partition of p.Path: the create of the completed receipt (an item in the
// file's partition, which fails with 409 when the operation is known) and
// the file change (CreateItem for a create, ReplaceItem or DeleteItem with
// If-Match on the ETag of the expected version). Cosmos DB applies a batch
// atomically: every operation, or none.
//
// The ETag of the expected version comes from the driver's cache (the
// store reads a file before it writes it, and each write caches the ETag
// it produced); without it Mutate reads the file first. When the batch
// fails on the file's condition the driver reads the file: still the
// expected version (a stale ETag) → another batch with the fresh ETag;
// otherwise driver.ErrPrecondition. When it fails on the receipt, the
// stored receipt is returned in Existing. A version mismatch found by a
// read also looks for the receipt first, so a known operation always
// answers before the version.
//
// A delete whose expected version is "" (the path must be absent) reads
// the file and, when it is absent, sends a batch of the receipt alone.
//
// p.History, when given, is one more CreateItem in the same batch, after
// the file change (the entry lives in the file's partition): it is written
// exactly when the change is, and costs no request of its own.
//
// The batch is sent without SDK retries (see send): an answer is always
// the answer to this batch, never to a re-send of one that had landed, so
// a failed condition is a real one. A lost reply is returned as an error
// that is not ErrPrecondition; the store settles it through the receipt.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	now := time.Now()
	pk, id := partitionOf(p.Path), fileID(p.Path)
	var rbody, fbody, hbody []byte
	var err error
	if p.History != nil {
		if hbody, err = encodeHistory(*p.History, now); err != nil {
			return driver.MutateResult{}, err
		}
	}
	if p.Receipt != nil {
		if rbody, err = encodeReceipt(*p.Receipt, pk, now); err != nil {
			return driver.MutateResult{}, err
		}
	}
	if p.Kind == driver.KindWrite {
		f := driver.File{Path: p.Path, Content: p.Content, Version: p.Version, Metadata: p.Metadata}
		if p.Receipt != nil {
			f.OperationID = p.Receipt.ID
		}
		if fbody, err = encodeFile(f, now); err != nil {
			return driver.MutateResult{}, err
		}
	}
	for range casRounds {
		var etag azcore.ETag
		if p.Expected != "" {
			if st, ok := d.files.Get(p.Path); ok && st.version == p.Expected && st.etag != "" {
				etag = st.etag
			}
		}
		if etag == "" && (p.Expected != "" || p.Kind == driver.KindDelete) {
			cur, fresh, err := d.readFile(ctx, p.Path)
			switch {
			case err != nil:
				return driver.MutateResult{}, err
			case cur == nil && p.Expected == "": // a delete of an absent path
			case cur == nil || cur.Version != p.Expected:
				return d.refuse(ctx, pk, p)
			case fresh == "":
				return driver.MutateResult{}, errNoETag
			default:
				etag = fresh
			}
		}
		b := d.c.NewTransactionalBatch(key(pk))
		ops, fileOp := 0, -1
		if rbody != nil {
			b.CreateItem(rbody, nil)
			ops++
		}
		switch {
		case p.Kind == driver.KindWrite && p.Expected == "":
			b.CreateItem(fbody, nil)
			fileOp, ops = ops, ops+1
		case p.Kind == driver.KindWrite:
			b.ReplaceItem(id, fbody, &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
			fileOp, ops = ops, ops+1
		case p.Expected != "":
			b.DeleteItem(id, &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &etag})
			fileOp, ops = ops, ops+1
		}
		if ops == 0 {
			return driver.MutateResult{}, nil // a plain delete of an absent path
		}
		if hbody != nil && fileOp >= 0 {
			// The entry rides in the same batch, after the change it
			// records; a delete of an absent path records none.
			b.CreateItem(hbody, nil)
		}
		var resp azcosmos.TransactionalBatchResponse
		err := d.send(ctx, func(ctx context.Context) error {
			var err error
			resp, err = d.c.ExecuteTransactionalBatch(ctx, b, nil)
			return err
		})
		if err != nil {
			d.files.Drop(p.Path)
			return driver.MutateResult{}, failure(err)
		}
		d.remember(pk, &resp.SessionToken)
		if at, code := batchFailure(resp); resp.Success && at >= 0 && code >= 300 {
			// A server that reports success for a batch with a failed
			// operation did not apply it atomically (the unpatched local
			// server does this): what it applied is unknown.
			d.files.Drop(p.Path)
			return driver.MutateResult{}, fmt.Errorf("%w: operation %d answered %d in a batch reported as committed; the server does not apply batches atomically", errBatch, at, code)
		}
		if resp.Success {
			switch {
			case p.Kind == driver.KindDelete:
				d.files.Drop(p.Path)
			case fileOp < len(resp.OperationResults):
				d.files.Put(p.Path, state{version: p.Version, etag: resp.OperationResults[fileOp].ETag})
			}
			if p.Receipt != nil {
				d.receiptParts.Put(p.Receipt.ID, pk)
			}
			return driver.MutateResult{}, nil
		}
		at, code := batchFailure(resp)
		switch {
		case at == 0 && rbody != nil && code == http.StatusConflict:
			r, err := d.readReceiptIn(ctx, pk, p.Receipt.ID)
			if err != nil || r != nil {
				return driver.MutateResult{Existing: r}, err
			}
			continue // expired since: try again
		case at == fileOp && (code == http.StatusPreconditionFailed || code == http.StatusNotFound || code == http.StatusConflict):
			d.files.Drop(p.Path)
			if p.Expected == "" {
				return driver.MutateResult{}, fmt.Errorf("cosmosdb: mutate %q: the path exists (%d): %w", p.Path, code, driver.ErrPrecondition)
			}
			continue // read the row: a stale ETag, or another version
		case code == http.StatusRequestEntityTooLarge:
			return driver.MutateResult{}, fmt.Errorf("cosmosdb: mutate %q: %w", p.Path, driver.ErrTooLarge)
		}
		return driver.MutateResult{}, fmt.Errorf("%w: operation %d answered %d", errBatch, at, code)
	}
	return driver.MutateResult{}, errContended
}

// refuse answers a Mutate whose expected version did not hold when read:
// the operation's receipt, if it exists, else driver.ErrPrecondition.
func (d *Driver) refuse(ctx context.Context, pk string, p driver.MutateParams) (driver.MutateResult, error) {
	if p.Receipt != nil {
		r, err := d.readReceiptIn(ctx, pk, p.Receipt.ID)
		if err != nil || r != nil {
			return driver.MutateResult{Existing: r}, err
		}
	}
	return driver.MutateResult{}, fmt.Errorf("cosmosdb: mutate %q: %w", p.Path, errVersion)
}

// batchFailure returns the index and status of the operation that failed
// a batch: the first whose status is neither 2xx nor 424 Failed
// Dependency; -1 when there is none.
func batchFailure(resp azcosmos.TransactionalBatchResponse) (int, int) {
	for i, r := range resp.OperationResults {
		if r.StatusCode >= 300 && r.StatusCode != http.StatusFailedDependency {
			return i, int(r.StatusCode)
		}
	}
	return -1, 0
}
