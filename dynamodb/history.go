package dynamodb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// History conditions and key conditions.
const (
	condPendingEntry = "#v = :v AND #pend = :true"
	keyHistoryScan   = "begins_with(#pk, :hist)"
)

// historyBatch is how many entries DeleteHistory removes per request
// (BatchWriteItem's limit).
const historyBatch = 25

// historyPut returns the item of e, refused with driver.ErrTooLarge when
// its key or size exceeds DynamoDB's limits.
func (d *Driver) historyPut(e driver.HistoryEntry) (map[string]types.AttributeValue, error) {
	if !historyKeyFits(e.Path) {
		return nil, fmt.Errorf("%w: the history key of a path of %d bytes exceeds DynamoDB's %d-byte sort keys", driver.ErrTooLarge, len(e.Path), maxSortKeyBytes)
	}
	it := d.l.historyItem(e)
	if n := itemSize(it); n > maxItemBytes {
		return nil, fmt.Errorf("%w: history entry of %d bytes, DynamoDB allows %d", driver.ErrTooLarge, n, maxItemBytes)
	}
	return it, nil
}

// PutHistory implements driver.Historian: a PutItem conditional on
// absence. After a retried attempt the item's version tells whether the
// entry is ours, as for files.
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	it, err := d.historyPut(e)
	if err != nil {
		return err
	}
	return d.put(ctx, it, condAbsent, nil, versionIs(e.Version))
}

// CompleteHistory implements driver.Historian: an UpdateItem removing the
// pending mark, conditional on the entry's version (an entry already
// complete is left as it is).
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	if !historyKeyFits(path) {
		return errorf("no history entry at a path this long: %w", driver.ErrPrecondition)
	}
	const update = "REMOVE #pend"
	var a attempts
	return retryConflicts(ctx, func() error {
		_, err := d.c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
			TableName:                 &d.table,
			Key:                       d.l.historyKey(path, version),
			UpdateExpression:          aws.String(update),
			ConditionExpression:       aws.String(condVersion),
			ExpressionAttributeNames:  exprNames(update, condVersion),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": str(version)},
		}, a.option)
		return conditional(err, &a, nil)
	})
}

// DropHistory implements driver.Historian: a DeleteItem conditional on the
// entry being pending with this version. When the condition fails, the
// item DynamoDB returns decides: none, or another version's, is success; a
// complete entry is driver.ErrPrecondition. The item is the truth whatever
// an earlier attempt did, so a retried attempt needs no special case.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	if !historyKeyFits(path) {
		return nil
	}
	values := map[string]types.AttributeValue{":v": str(version), ":true": boolean(true)}
	err := retryConflicts(ctx, func() error {
		_, err := d.c.DeleteItem(ctx, &awsdynamodb.DeleteItemInput{
			TableName:                           &d.table,
			Key:                                 d.l.historyKey(path, version),
			ConditionExpression:                 aws.String(condPendingEntry),
			ExpressionAttributeNames:            exprNames(condPendingEntry),
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		return err
	})
	item, failed := conditionFailed(err)
	switch {
	case !failed:
		return err
	case getS(item, attrVersion) != version:
		return nil // no entry of this version
	default:
		return errorf("history entry %s of %q is complete: %w", version, path, driver.ErrPrecondition)
	}
}

// GetHistory implements driver.Historian: one consistent GetItem.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	if !historyKeyFits(path) {
		return nil, nil
	}
	out, err := d.c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: &d.table, Key: d.l.historyKey(path, version), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	e, err := decodeHistory(out.Item)
	if err != nil || e == nil || e.Version != version {
		return nil, err
	}
	return e, nil
}

// ListHistory implements driver.Historian. A prefix naming one file, or
// at least Options.PartitionDepth directories, is one Query on its history
// partition, paged from p.After, exactly as ListFiles lists paths; a
// shorter one is a Scan of the whole table, as for ListFiles.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	if len(p.After) > maxSortKeyBytes {
		// No stored key lies strictly between the cut and After.
		p.After = p.After[:maxSortKeyBytes]
	}
	if p.After != "" && p.After >= p.Prefix && !strings.HasPrefix(p.After, p.Prefix) {
		return nil, nil // After is beyond every key with the prefix
	}
	if len(p.Prefix) > maxSortKeyBytes {
		return nil, nil
	}
	var out []driver.HistoryEntry
	add := func(items []map[string]types.AttributeValue) error {
		for _, it := range items {
			e, err := decodeHistory(it)
			if err != nil {
				return err
			}
			out = append(out, *e)
		}
		return nil
	}
	if pk, ok := d.l.historyPrefixPartition(p.Prefix); ok {
		err := d.queryHistory(ctx, pk, p.Prefix, p.After, p.Limit, "", func(items []map[string]types.AttributeValue) (int, error) {
			err := add(items)
			return p.Limit - len(out), err
		})
		return out, err
	}
	err := d.scanHistory(ctx, p.Prefix, p.After, "", func(items []map[string]types.AttributeValue) error {
		if err := add(items); err != nil {
			return err
		}
		slices.SortFunc(out, func(a, b driver.HistoryEntry) int { return strings.Compare(a.Key(), b.Key()) })
		out = out[:min(len(out), p.Limit)]
		return nil
	})
	return out, err
}

// queryHistory reads the entries of partition pk whose key starts with
// prefix and follows after, in key order, in pages (projected to
// projection when not empty): the first of at most limit items, each next
// one of at most what page returned for the one before, until page
// returns 0 or an error, or no entry is left.
func (d *Driver) queryHistory(ctx context.Context, pk, prefix, after string, limit int, projection string, page func([]map[string]types.AttributeValue) (int, error)) error {
	in := &awsdynamodb.QueryInput{
		TableName:                 &d.table,
		KeyConditionExpression:    aws.String(keyPrefixQuery),
		ExpressionAttributeNames:  exprNames(keyPrefixQuery, projection),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":prefix": str(prefix)},
		ConsistentRead:            aws.Bool(true),
	}
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
	}
	if after != "" && after >= prefix {
		in.ExclusiveStartKey = map[string]types.AttributeValue{attrPK: str(pk), attrSK: str(after)}
	}
	for limit > 0 {
		in.Limit = aws.Int32(int32(min(limit, 1<<30)))
		out, err := d.c.Query(ctx, in)
		if err != nil {
			return err
		}
		if limit, err = page(out.Items); err != nil || len(out.LastEvaluatedKey) == 0 {
			return err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return nil
}

// scanHistory reads every history entry of the table whose key starts
// with prefix and follows after, page by page (in no order), handing each
// page to page until it returns an error or the table ends.
func (d *Driver) scanHistory(ctx context.Context, prefix, after, projection string, page func([]map[string]types.AttributeValue) error) error {
	filter := keyHistoryScan
	values := map[string]types.AttributeValue{":hist": str(historyPrefix)}
	if prefix != "" {
		filter += " AND begins_with(#sk, :prefix)"
		values[":prefix"] = str(prefix)
	}
	if after != "" {
		filter += " AND #sk > :after"
		values[":after"] = str(after)
	}
	in := &awsdynamodb.ScanInput{
		TableName:                 &d.table,
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  exprNames(filter, projection),
		ExpressionAttributeValues: values,
		ConsistentRead:            aws.Bool(true),
	}
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
	}
	for {
		out, err := d.c.Scan(ctx, in)
		if err != nil {
			return err
		}
		if err := page(out.Items); err != nil || len(out.LastEvaluatedKey) == 0 {
			return err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// DeleteHistory implements driver.Historian. It reads the keys of the
// prefix's entries (a Query of its history partition, or a Scan when the
// prefix spans partitions, as ListHistory) and removes them with
// BatchWriteItem, 25 per request, each request on its own: no lock is
// held, and writers never wait for it.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	if len(prefix) > maxSortKeyBytes {
		return 0, nil
	}
	n := 0
	remove := func(items []map[string]types.AttributeValue) error {
		for len(items) > 0 {
			k := min(len(items), historyBatch)
			if err := d.deleteItems(ctx, items[:k]); err != nil {
				return err
			}
			n += k
			items = items[k:]
		}
		return nil
	}
	const keys = "#pk, #sk"
	if pk, ok := d.l.historyPrefixPartition(prefix); ok {
		err := d.queryHistory(ctx, pk, prefix, "", historyBatch, keys, func(items []map[string]types.AttributeValue) (int, error) {
			return historyBatch, remove(items)
		})
		return n, err
	}
	err := d.scanHistory(ctx, prefix, "", keys, remove)
	return n, err
}

// deleteItems removes the items with keys (at most 25) in one
// BatchWriteItem, sending unprocessed ones again with backoff.
func (d *Driver) deleteItems(ctx context.Context, keys []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	backoff := 20 * time.Millisecond
	for len(reqs) > 0 {
		out, err := d.c.BatchWriteItem(ctx, &awsdynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{d.table: reqs}})
		if err != nil {
			return err
		}
		if reqs = out.UnprocessedItems[d.table]; len(reqs) > 0 {
			if err := driver.Sleep(ctx, backoff); err != nil {
				return err
			}
			backoff = min(2*backoff, time.Second)
		}
	}
	return nil
}
