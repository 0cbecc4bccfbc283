package dynamodb_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/dynamodb"
)

// BenchmarkSingleItemReceipt measures the alternative to the
// TransactWriteItems that Mutate sends (issue 14): one conditional PutItem
// of the file item carrying the receipts of its most recent operations in
// a map attribute (condition: the operation is not in the map, and the
// version is the expected one), against the transaction of the same file
// item and a receipt item, and against a raw conditional PutItem of the
// file item alone (the raw conditional write the ratios use). All
// three are interleaved in one loop on one table; the report gives their
// medians, the ratios to the raw write, and the write capacity each
// consumed (ReturnConsumedCapacity TOTAL, summed over the run).
func BenchmarkSingleItemReceipt(b *testing.B) {
	ctx := b.Context()
	c := newClient(b)
	d := newDriver(b, c, nil)
	table := aws.String(d.Table())
	content := strings.Repeat("- a remembered fact about the user\n", 40) // 1.4 KB, a small MEMORY.md
	const keep = 16                                                       // receipts kept on the item
	receipt := func(i int) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"id":         &types.AttributeValueMemberS{Value: fmt.Sprintf("ns/main/run-1/call-%d", i)},
			"fp":         &types.AttributeValueMemberS{Value: strings.Repeat("f", 64)},
			"kind":       &types.AttributeValueMemberS{Value: "write"},
			"expected":   &types.AttributeValueMemberS{Value: fmt.Sprint("v", i-1)},
			"v":          &types.AttributeValueMemberS{Value: fmt.Sprint("v", i)},
			"existed":    &types.AttributeValueMemberBOOL{Value: true},
			"created":    &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().UnixNano())},
			"expires_at": &types.AttributeValueMemberN{Value: fmt.Sprint(time.Now().Add(24 * time.Hour).Unix())},
		}}
	}
	item := func(path string, i int) map[string]types.AttributeValue {
		return dynamodb.FileItem(d, driver.File{Path: path, Version: fmt.Sprint("v", i), Content: content, OperationID: fmt.Sprint("op-", i)})
	}
	names := map[string]string{"#v": "v", "#ops": "ops", "#h": ""}
	var raw, single, tx []time.Duration
	var wcuRaw, wcuSingle, wcuTx float64
	ops := map[string]types.AttributeValue{}
	for _, p := range []string{"raw/main/MEMORY.md", "one/main/MEMORY.md", "tx/main/MEMORY.md"} {
		it := item(p, 0)
		if p == "one/main/MEMORY.md" {
			it["ops"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
		}
		if _, err := c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: table, Item: it}); err != nil {
			b.Fatal(err)
		}
	}
	capacity := func(cc *types.ConsumedCapacity) float64 {
		if cc == nil {
			return 0
		}
		return aws.ToFloat64(cc.CapacityUnits)
	}
	i := 0
	for b.Loop() {
		i++
		exp := map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: fmt.Sprint("v", i-1)}}

		t0 := time.Now()
		out, err := c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: table, Item: item("raw/main/MEMORY.md", i),
			ConditionExpression: aws.String("#v = :v"), ExpressionAttributeNames: map[string]string{"#v": "v"},
			ExpressionAttributeValues: exp, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			b.Fatal(err)
		}
		raw, wcuRaw = append(raw, time.Since(t0)), wcuRaw+capacity(out.ConsumedCapacity)

		// One item: the file and the last `keep` receipts.
		h := fmt.Sprintf("op%d", i)
		ops[h] = receipt(i)
		if len(ops) > keep {
			delete(ops, fmt.Sprintf("op%d", i-keep))
		}
		it := item("one/main/MEMORY.md", i)
		it["ops"] = &types.AttributeValueMemberM{Value: maps.Clone(ops)}
		names["#h"] = h
		t0 = time.Now()
		out, err = c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: table, Item: it,
			ConditionExpression:      aws.String("attribute_not_exists(#ops.#h) AND #v = :v"),
			ExpressionAttributeNames: names, ExpressionAttributeValues: exp,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              types.ReturnConsumedCapacityTotal})
		if err != nil {
			b.Fatal(err)
		}
		single, wcuSingle = append(single, time.Since(t0)), wcuSingle+capacity(out.ConsumedCapacity)

		// What Mutate sends: the file item and a receipt item.
		rc := receipt(i).(*types.AttributeValueMemberM).Value
		rc["pk"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("#op#tx/run-1/call-%d", i)}
		rc["sk"] = &types.AttributeValueMemberS{Value: "#"}
		t0 = time.Now()
		tout, err := c.TransactWriteItems(ctx, &awsdynamodb.TransactWriteItemsInput{
			ClientRequestToken:     aws.String(fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("tx/main/MEMORY.md", i), ConditionExpression: aws.String("#v = :v"),
					ExpressionAttributeNames: map[string]string{"#v": "v"}, ExpressionAttributeValues: exp}},
				{Put: &types.Put{TableName: table, Item: rc, ConditionExpression: aws.String("attribute_not_exists(#pk)"),
					ExpressionAttributeNames: map[string]string{"#pk": "pk"}}},
			}})
		if err != nil {
			b.Fatal(err)
		}
		tx = append(tx, time.Since(t0))
		if i == 1 {
			for _, cc := range tout.ConsumedCapacity {
				b.Logf("tx capacity: %s total=%v write=%v", aws.ToString(cc.TableName), aws.ToFloat64(cc.CapacityUnits), aws.ToFloat64(cc.WriteCapacityUnits))
			}
		}
		for _, cc := range tout.ConsumedCapacity {
			wcuTx += capacity(&cc)
		}
	}
	mr, ms, mt := median(raw), median(single), median(tx)
	b.ReportMetric(float64(mr.Nanoseconds()), "raw-ns")
	b.ReportMetric(float64(ms.Nanoseconds()), "single-ns")
	b.ReportMetric(float64(mt.Nanoseconds()), "tx-ns")
	b.ReportMetric(float64(ms)/float64(mr), "single/raw")
	b.ReportMetric(float64(mt)/float64(mr), "tx/raw")
	b.ReportMetric(wcuRaw/float64(i), "raw-wcu/op")
	b.ReportMetric(wcuSingle/float64(i), "single-wcu/op")
	b.ReportMetric(wcuTx/float64(i), "tx-wcu/op")
}
