package dynamodb

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// Condition expressions. Attribute names always go through placeholders,
// so no attribute collides with a DynamoDB reserved word.
const (
	condAbsent        = "attribute_not_exists(#pk)"
	condVersion       = "#v = :v"
	condPending       = "#v = :v AND #done = :false"
	condDroppable     = "attribute_not_exists(#pk) OR (#v = :v AND #done = :false)"
	keyPrefixQuery    = "#pk = :pk AND begins_with(#sk, :prefix)"
	keyPartitionQuery = "#pk = :pk"
)

// names are the placeholders the expressions use.
var names = map[string]string{
	"#pk": attrPK, "#sk": attrSK, "#v": attrVersion, "#done": attrDone,
	"#tomb": attrTombstone, "#dir": attrDir, "#c": attrContent, "#pend": attrPending,
	"#md": attrMetadata,
}

// listProjection is what a listing reads of each row: the path, the
// tombstone flag and the metadata string, whose store-owned keys are the
// entry's lifetime (driver.Entry.Lifetime). The metadata is at most a few
// KB; the content is never read.
const listProjection = "#sk, #tomb, #md"

// exprNames returns the placeholders used by the given expressions.
func exprNames(exprs ...string) map[string]string {
	out := map[string]string{}
	for ph, name := range names {
		for _, e := range exprs {
			if strings.Contains(e, ph) {
				out[ph] = name
			}
		}
	}
	return out
}

// GetFile implements driver.Driver.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	if !keyFits(path) {
		return nil, nil // no such row can exist
	}
	out, err := d.c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: &d.table, Key: d.l.fileKey(path), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return decodeFile(out.Item)
}

// ListFiles implements driver.Driver. A prefix that names at least
// Options.PartitionDepth directories is one Query on its partition, paged
// from p.After; a shorter one is a Scan of the whole table. Either reads
// each row's path, tombstone flag and metadata attribute (never its
// content), and fills each entry's Lifetime from that metadata in the
// same request.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	if len(p.After) > maxSortKeyBytes {
		// No stored path lies strictly between the cut and After.
		p.After = p.After[:maxSortKeyBytes]
	}
	if p.After != "" && p.After >= p.Prefix && !strings.HasPrefix(p.After, p.Prefix) {
		return nil, nil // After is beyond every path with the prefix
	}
	if len(p.Prefix) > maxSortKeyBytes {
		return nil, nil
	}
	if pk, ok := d.l.prefixPartition(p.Prefix); ok {
		return d.listQuery(ctx, pk, p)
	}
	return d.listScan(ctx, p)
}

func (d *Driver) listQuery(ctx context.Context, pk string, p driver.ListParams) ([]driver.Entry, error) {
	in := &awsdynamodb.QueryInput{
		TableName:                 &d.table,
		KeyConditionExpression:    aws.String(keyPrefixQuery),
		ProjectionExpression:      aws.String(listProjection),
		ExpressionAttributeNames:  exprNames(keyPrefixQuery, listProjection),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":prefix": str(p.Prefix)},
		ConsistentRead:            aws.Bool(true),
	}
	if p.After >= p.Prefix && p.After != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{attrPK: str(pk), attrSK: str(p.After)}
	}
	var out []driver.Entry
	for len(out) < p.Limit {
		in.Limit = aws.Int32(int32(min(p.Limit-len(out), 1<<30)))
		page, err := d.c.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			e, err := decodeEntry(it)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// listScan serves a prefix that spans partitions: it reads every item of
// the table, keeping the p.Limit smallest matching paths.
func (d *Driver) listScan(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	// History entries (whose sort keys start with paths too) are left
	// out by their partition.
	filter := "#sk <> :receipt AND NOT " + keyHistoryScan
	values := map[string]types.AttributeValue{":receipt": str(receiptSortKey), ":hist": str(historyPrefix)}
	if p.Prefix != "" {
		filter = "begins_with(#sk, :prefix) AND NOT " + keyHistoryScan
		values = map[string]types.AttributeValue{":prefix": str(p.Prefix), ":hist": str(historyPrefix)}
	}
	if p.After != "" {
		filter += " AND #sk > :after"
		values[":after"] = str(p.After)
	}
	in := &awsdynamodb.ScanInput{
		TableName:                 &d.table,
		FilterExpression:          aws.String(filter),
		ProjectionExpression:      aws.String(listProjection),
		ExpressionAttributeNames:  exprNames(filter, listProjection),
		ExpressionAttributeValues: values,
		ConsistentRead:            aws.Bool(true),
	}
	var out []driver.Entry
	for {
		page, err := d.c.Scan(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			e, err := decodeEntry(it)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		slices.SortFunc(out, func(a, b driver.Entry) int { return strings.Compare(a.Path, b.Path) })
		out = out[:min(len(out), p.Limit)]
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// put writes item under cond with the placeholders cond uses; see
// conditional for how a failed condition is reported.
func (d *Driver) put(ctx context.Context, item map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue, landed func(map[string]types.AttributeValue) bool) error {
	if n := itemSize(item); n > maxItemBytes {
		return fmt.Errorf("%w: item of %d bytes, DynamoDB allows %d", driver.ErrTooLarge, n, maxItemBytes)
	}
	var a attempts
	return retryConflicts(ctx, func() error {
		_, err := d.c.PutItem(ctx, &awsdynamodb.PutItemInput{
			TableName:                           &d.table,
			Item:                                item,
			ConditionExpression:                 &cond,
			ExpressionAttributeNames:            exprNames(cond),
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}, a.option)
		return conditional(err, &a, landed)
	})
}

// del deletes the item at key under cond.
func (d *Driver) del(ctx context.Context, key map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue) error {
	var a attempts
	return retryConflicts(ctx, func() error {
		_, err := d.c.DeleteItem(ctx, &awsdynamodb.DeleteItemInput{
			TableName:                 &d.table,
			Key:                       key,
			ConditionExpression:       &cond,
			ExpressionAttributeNames:  exprNames(cond),
			ExpressionAttributeValues: values,
		}, a.option)
		return conditional(err, &a, nil)
	})
}

// CreateFile implements driver.Driver. A row too large for an item is
// driver.ErrTooLarge, checked before anything is sent.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	if !keyFits(f.Path) {
		return fmt.Errorf("%w: path of %d bytes, DynamoDB sort keys allow %d", driver.ErrTooLarge, len(f.Path), maxSortKeyBytes)
	}
	return d.put(ctx, d.l.fileItem(f), condAbsent, nil, versionIs(f.Version))
}

// ReplaceFile implements driver.Driver.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if !keyFits(f.Path) {
		return errorf("no row at a path this long: %w", driver.ErrPrecondition)
	}
	return d.put(ctx, d.l.fileItem(f), condVersion, map[string]types.AttributeValue{":v": str(expected)}, versionIs(f.Version))
}

// DeleteFile implements driver.Driver.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	if !keyFits(path) {
		return errorf("no row at a path this long: %w", driver.ErrPrecondition)
	}
	return d.del(ctx, d.l.fileKey(path), condVersion, map[string]types.AttributeValue{":v": str(expected)})
}

// GetReceipt implements driver.Driver.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	out, err := d.c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: &d.table, Key: receiptKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return decodeReceipt(out.Item), nil
}

// ReserveReceipt implements driver.Driver.
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	return d.put(ctx, receiptItem(r), condAbsent, nil, func(it map[string]types.AttributeValue) bool {
		old := decodeReceipt(it)
		return old != nil && old.Version == r.Version && !old.Completed
	})
}

// CompleteReceipt implements driver.Driver.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	err := d.put(ctx, receiptItem(r), condPending, map[string]types.AttributeValue{":v": str(r.Version), ":false": boolean(false)}, nil)
	if item, ok := conditionFailed(err); ok {
		// Completed receipts never change, so the item tells exactly
		// whether this completion (or an earlier one) is in place.
		if old := decodeReceipt(item); old != nil && old.Completed && old.Version == r.Version {
			return nil
		}
		return errorf("receipt %q is not pending with version %q: %w", r.ID, r.Version, driver.ErrPrecondition)
	}
	return err
}

// DropReceipt implements driver.Driver.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	return d.del(ctx, receiptKey(id), condDroppable, map[string]types.AttributeValue{":v": str(version), ":false": boolean(false)})
}
