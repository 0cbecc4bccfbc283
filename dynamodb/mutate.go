package dynamodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// Mutate implements driver.Mutator in one request. With a receipt or a
// history entry it is a TransactWriteItems of the file change (conditional
// on the expected version, or on absence), a Put of the completed receipt
// conditional on attribute_not_exists, and a Put of the history entry (a
// fresh key); the cancellation reasons say which condition failed, and a
// cancelled transaction wrote none of them. A client request token makes
// the SDK's retries of the transaction idempotent. Without either it is one
// conditional PutItem or DeleteItem (or one consistent GetItem for a
// delete that expects no file, which changes nothing and records no
// entry).
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	f := driver.File{Path: p.Path, Content: p.Content, Version: p.Version, Metadata: p.Metadata}
	if p.Receipt != nil {
		f.OperationID = p.Receipt.ID
	}
	if !keyFits(p.Path) {
		return d.mutateLongPath(ctx, p)
	}
	history := p.History
	if p.Kind == driver.KindDelete && p.Expected == "" {
		history = nil // a delete of an absent path records none
	}
	if p.Receipt == nil && history == nil {
		return driver.MutateResult{}, d.mutatePlain(ctx, p, f)
	}
	change, err := d.fileChange(p, f)
	items := []types.TransactWriteItem{change}
	receiptAt := -1
	if p.Receipt != nil {
		receipt := receiptItem(*p.Receipt)
		if n := itemSize(receipt); err == nil && n > maxItemBytes {
			err = fmt.Errorf("%w: receipt of %d bytes", driver.ErrTooLarge, n)
		}
		receiptAt = len(items)
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName:                           &d.table,
			Item:                                receipt,
			ConditionExpression:                 aws.String(condAbsent),
			ExpressionAttributeNames:            exprNames(condAbsent),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	if history != nil {
		entry, herr := d.historyPut(*history)
		if err == nil {
			err = herr
		}
		// Unconditional: the entry's version is new, so is its key.
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &d.table, Item: entry}})
	}
	if err != nil {
		// Nothing can be sent; a known operation still answers first.
		if p.Receipt != nil {
			if r, gerr := d.GetReceipt(ctx, p.Receipt.ID); gerr == nil && r != nil {
				return driver.MutateResult{Existing: r}, nil
			}
		}
		return driver.MutateResult{}, err
	}
	in := &awsdynamodb.TransactWriteItemsInput{TransactItems: items}
	// Each call gets a fresh client request token, which makes the SDK's
	// retries of that call idempotent; a cancelled transaction wrote
	// nothing, so sending it again under a new token is safe.
	err = retryConflicts(ctx, func() error {
		in.ClientRequestToken = aws.String(requestToken())
		_, err := d.c.TransactWriteItems(ctx, in)
		return err
	})
	if err == nil {
		return driver.MutateResult{}, nil
	}
	reasons, ok := cancellation(err)
	if !ok || len(reasons) != len(items) {
		return driver.MutateResult{}, err
	}
	// A cancelled transaction wrote nothing. The receipt is checked first.
	if receiptAt >= 0 && aws.ToString(reasons[receiptAt].Code) == reasonConditionFailed {
		existing := decodeReceipt(reasons[receiptAt].Item)
		if existing == nil { // the emulator or service left the item out
			if existing, err = d.GetReceipt(ctx, p.Receipt.ID); err != nil {
				return driver.MutateResult{}, err
			}
		}
		if existing == nil {
			return driver.MutateResult{}, errorf("operation %q: receipt vanished after its condition failed", p.Receipt.ID)
		}
		return driver.MutateResult{Existing: existing}, nil
	}
	if aws.ToString(reasons[0].Code) == reasonConditionFailed {
		return driver.MutateResult{}, fmt.Errorf("%w: %w", driver.ErrPrecondition, err)
	}
	return driver.MutateResult{}, err // a conflict with another transaction, throttling, …
}

// requestToken returns a fresh TransactWriteItems client request token.
func requestToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// mutateLongPath applies p to a path too long for a sort key, where no
// row can exist: the receipt answers first, then the version rules.
func (d *Driver) mutateLongPath(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	if p.Receipt != nil {
		r, err := d.GetReceipt(ctx, p.Receipt.ID)
		if err != nil || r != nil {
			return driver.MutateResult{Existing: r}, err
		}
	}
	switch {
	case p.Expected != "":
		return driver.MutateResult{}, errorf("no row at a path this long: %w", driver.ErrPrecondition)
	case p.Kind == driver.KindWrite:
		return driver.MutateResult{}, fmt.Errorf("%w: path of %d bytes, DynamoDB sort keys allow %d", driver.ErrTooLarge, len(p.Path), maxSortKeyBytes)
	case p.Receipt == nil:
		return driver.MutateResult{}, nil // a delete of an absent path
	}
	err := d.put(ctx, receiptItem(*p.Receipt), condAbsent, nil, nil)
	if item, ok := conditionFailed(err); ok && len(item) > 0 {
		return driver.MutateResult{Existing: decodeReceipt(item)}, nil
	}
	return driver.MutateResult{}, err
}

// fileChange returns the transaction item that applies p to the file row.
func (d *Driver) fileChange(p driver.MutateParams, f driver.File) (types.TransactWriteItem, error) {
	key := d.l.fileKey(p.Path)
	switch {
	case p.Kind == driver.KindWrite:
		item := d.l.fileItem(f)
		if n := itemSize(item); n > maxItemBytes {
			return types.TransactWriteItem{}, fmt.Errorf("%w: item of %d bytes, DynamoDB allows %d", driver.ErrTooLarge, n, maxItemBytes)
		}
		put := &types.Put{TableName: &d.table, Item: item, ConditionExpression: aws.String(condAbsent), ExpressionAttributeNames: exprNames(condAbsent)}
		if p.Expected != "" {
			put.ConditionExpression = aws.String(condVersion)
			put.ExpressionAttributeNames = exprNames(condVersion)
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": str(p.Expected)}
		}
		return types.TransactWriteItem{Put: put}, nil
	case p.Expected == "":
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: &d.table, Key: key, ConditionExpression: aws.String(condAbsent), ExpressionAttributeNames: exprNames(condAbsent),
		}}, nil
	default:
		return types.TransactWriteItem{Delete: &types.Delete{
			TableName: &d.table, Key: key, ConditionExpression: aws.String(condVersion), ExpressionAttributeNames: exprNames(condVersion),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": str(p.Expected)},
		}}, nil
	}
}

// mutatePlain applies a mutation without a receipt in one request.
func (d *Driver) mutatePlain(ctx context.Context, p driver.MutateParams, f driver.File) error {
	switch {
	case p.Kind == driver.KindWrite && p.Expected == "":
		return d.put(ctx, d.l.fileItem(f), condAbsent, nil, versionIs(f.Version))
	case p.Kind == driver.KindWrite:
		return d.put(ctx, d.l.fileItem(f), condVersion, map[string]types.AttributeValue{":v": str(p.Expected)}, versionIs(f.Version))
	case p.Expected == "":
		cur, err := d.GetFile(ctx, p.Path)
		if err != nil {
			return err
		}
		if cur != nil {
			return errorf("a row exists at %q: %w", p.Path, driver.ErrPrecondition)
		}
		return nil
	default:
		return d.del(ctx, d.l.fileKey(p.Path), condVersion, map[string]types.AttributeValue{":v": str(p.Expected)})
	}
}
