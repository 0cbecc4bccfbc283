package dynamodb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// No driver.Pruner: DynamoDB's time to live deletes the expired receipts,
// tombstones and history entries, which carry TTLAttribute. New turns it
// on for the tables it manages.

// enableTTL turns on time to live on TTLAttribute unless it is on.
func (d *Driver) enableTTL(ctx context.Context) error {
	out, err := d.c.DescribeTimeToLive(ctx, &awsdynamodb.DescribeTimeToLiveInput{TableName: &d.table})
	if err != nil {
		return errorf("describe time to live of %q: %w", d.table, err)
	}
	if t := out.TimeToLiveDescription; t != nil && aws.ToString(t.AttributeName) == TTLAttribute &&
		(t.TimeToLiveStatus == types.TimeToLiveStatusEnabled || t.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = d.c.UpdateTimeToLive(ctx, &awsdynamodb.UpdateTimeToLiveInput{
		TableName:               &d.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return errorf("enable time to live on %q.%s: %w", d.table, TTLAttribute, err)
	}
	return nil
}

// ttlSeconds is t as a TTL value: Unix seconds, rounded up so that an item
// never expires before t.
func ttlSeconds(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}
