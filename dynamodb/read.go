package dynamodb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// batchGetMax is BatchGetItem's limit of keys per request.
const batchGetMax = 100

// scopeProjection is what a scope read reads of each file: its path,
// content, version and metadata (for its lifetime).
const scopeProjection = "#sk, #c, #v, #md"

// GetFiles implements driver.BatchGetter with consistent BatchGetItem
// requests of up to 100 keys, retrying unprocessed keys with backoff.
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	seen := make(map[string]bool, len(paths))
	var keys []map[string]types.AttributeValue
	for _, p := range paths {
		if !seen[p] && keyFits(p) {
			seen[p] = true
			keys = append(keys, d.l.fileKey(p))
		}
	}
	out := make([]*driver.File, 0, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), batchGetMax)
		chunk := keys[:n]
		keys = keys[n:]
		backoff := 20 * time.Millisecond
		for len(chunk) > 0 {
			res, err := d.c.BatchGetItem(ctx, &awsdynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				d.table: {Keys: chunk, ConsistentRead: aws.Bool(true)},
			}})
			if err != nil {
				return nil, err
			}
			for _, it := range res.Responses[d.table] {
				f, err := decodeFile(it)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
			chunk = res.UnprocessedKeys[d.table].Keys
			if len(chunk) > 0 {
				if err := driver.Sleep(ctx, backoff); err != nil {
					return nil, err
				}
				backoff = min(2*backoff, time.Second)
			}
		}
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader: one Query on the scope's
// partition, its key range limited to the scope, filtered to the files
// directly in it (no tombstones), paged when a page reaches 1 MB. Each
// file's Lifetime comes from its metadata attribute, read by the same
// Query.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	if !keyFits(p.Prefix) {
		return nil, nil
	}
	key := keyPartitionQuery
	filter := "attribute_not_exists(#tomb)"
	values := map[string]types.AttributeValue{":pk": str(d.l.dirPartition(p.Prefix))}
	if p.Prefix != "" {
		key = keyPrefixQuery
		values[":prefix"] = str(p.Prefix)
		filter += " AND #dir = :prefix"
	}
	in := &awsdynamodb.QueryInput{
		TableName:                 &d.table,
		KeyConditionExpression:    &key,
		FilterExpression:          &filter,
		ProjectionExpression:      aws.String(scopeProjection),
		ExpressionAttributeNames:  exprNames(key, filter, scopeProjection),
		ExpressionAttributeValues: values,
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(min(p.Limit, 1<<30))),
	}
	var out []driver.ScopeFile
	for len(out) < p.Limit {
		page, err := d.c.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if len(out) == p.Limit {
				break
			}
			path := getS(it, attrSK)
			lt, err := lifetimeOf(path, it)
			if err != nil {
				return nil, err
			}
			content, cut := driver.CutRunes(getS(it, attrContent), p.MaxChars)
			out = append(out, driver.ScopeFile{Path: path, Content: content, Truncated: cut, Version: getS(it, attrVersion), Lifetime: lt})
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}
