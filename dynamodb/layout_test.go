package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
)

func TestPartitions(t *testing.T) {
	for _, tc := range []struct {
		depth          int
		path, wantPK   string
		prefix, prefPK string // prefPK "" = spans partitions
	}{
		{1, "kamal/main/MEMORY.md", "kamal/", "kamal/main/", "kamal/"},
		{1, "MEMORY.md", "/", "kamal", ""},
		{1, "a/b.md", "a/", "", ""},
		{1, "a/b/c/d.md", "a/", "a/", "a/"},
		{2, "org/u1/main/M.md", "org/u1/", "org/u1/", "org/u1/"},
		{2, "org/M.md", "org/", "org/", ""},
		{2, "org/u1/M.md", "org/u1/", "org/u1/ma", "org/u1/"},
		{2, "M.md", "/", "org/u", ""},
	} {
		l := layout{depth: tc.depth}
		if got := getS(l.fileKey(tc.path), attrPK); got != tc.wantPK {
			t.Errorf("depth %d: partition of %q = %q, want %q", tc.depth, tc.path, got, tc.wantPK)
		}
		got, ok := l.prefixPartition(tc.prefix)
		if ok != (tc.prefPK != "") || got != tc.prefPK {
			t.Errorf("depth %d: partition of prefix %q = %q, %v; want %q", tc.depth, tc.prefix, got, ok, tc.prefPK)
		}
	}
	long := strings.Repeat("😀", 512) // the longest id the store allows
	if k := getS(receiptKey(long), attrPK); !strings.HasPrefix(k, hashedReceiptPrefix) || len(k) > maxPartitionKeyBytes {
		t.Errorf("long receipt id key %q", k)
	}
	if k := getS(receiptKey("run-1/call-1"), attrPK); k != receiptPrefix+"run-1/call-1" {
		t.Errorf("receipt key %q", k)
	}
}

// TestHistoryPartitions: a file's history lives in the history partition
// of the file's partition, and a history prefix maps to one partition when
// it names a file or, as for listings, enough directories.
func TestHistoryPartitions(t *testing.T) {
	for _, tc := range []struct {
		depth          int
		path, wantPK   string
		prefix, prefPK string // prefPK "" = spans partitions
	}{
		{1, "kamal/main/MEMORY.md", "#h#kamal/", "kamal/main/MEMORY.md ", "#h#kamal/"},
		{1, "MEMORY.md", "#h#/", "MEMORY.md ", "#h#/"},
		{1, "MEMORY.md", "#h#/", "MEMORY.md", ""},
		{1, "a/b.md", "#h#a/", "a/", "#h#a/"},
		{1, "a/b.md", "#h#a/", "", ""},
		{2, "org/u1/main/M.md", "#h#org/u1/", "org/u1/", "#h#org/u1/"},
		{2, "org/M.md", "#h#org/", "org/M.md 7ZZ", "#h#org/"},
		{2, "org/M.md", "#h#org/", "org/", ""},
	} {
		l := layout{depth: tc.depth}
		k := l.historyKey(tc.path, "01JB0000000000000000000000~op")
		if got := getS(k, attrPK); got != tc.wantPK {
			t.Errorf("depth %d: history partition of %q = %q, want %q", tc.depth, tc.path, got, tc.wantPK)
		}
		if got := getS(k, attrSK); got != driver.HistoryKey(tc.path, "01JB0000000000000000000000") {
			t.Errorf("history sort key of %q = %q", tc.path, got)
		}
		got, ok := l.historyPrefixPartition(tc.prefix)
		if ok != (tc.prefPK != "") || got != tc.prefPK {
			t.Errorf("depth %d: history partition of prefix %q = %q, %v; want %q", tc.depth, tc.prefix, got, ok, tc.prefPK)
		}
	}
	if !historyKeyFits(strings.Repeat("a", 1024-27)) || historyKeyFits(strings.Repeat("a", 1024-26)) {
		t.Error("historyKeyFits does not match the 1,024-byte sort key limit")
	}
}

// TestItemSizeMatchesDynamoDB proves that itemSize never under-counts: a
// file item whose estimate is exactly the limit is accepted, one byte more
// is refused by the server too.
func TestItemSizeMatchesDynamoDB(t *testing.T) {
	ctx := t.Context()
	c := awsdynamodb.New(awsdynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(emulator.Require(t, emulator.DynamoDBEndpoint)),
		Credentials:  credentials.NewStaticCredentialsProvider("agentmemKey", "agentmemSecret", ""),
	})
	table := fmt.Sprintf("am-size-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.WithoutCancel(t.Context()), &awsdynamodb.DeleteTableInput{TableName: &table})
	})
	d, err := New(ctx, c, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	// All strings: the estimate is exact, so one byte more is refused.
	f := driver.File{Path: "t/main/big.md", Version: "01J0000000000000000000000~op", OperationID: "op", Metadata: map[string]string{"k": "v"}}
	atLimit(t, d, &f)
	if _, err := c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: &table, Item: d.l.fileItem(f)}); err != nil {
		t.Fatalf("an item at the estimated limit was refused: %v", err)
	}
	f.Content += "x"
	if _, err := c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: &table, Item: d.l.fileItem(f)}); err == nil {
		t.Fatal("the server accepted an item one byte over the limit: the estimate is off")
	}
	if err := d.ReplaceFile(ctx, f, f.Version); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("ReplaceFile one byte over: %v, want ErrTooLarge", err)
	}
	// With numbers (a tombstone's TTL) the estimate is an upper bound.
	g := driver.File{Path: "t/main/tomb.md", Version: "v", Tombstone: true, ExpiresAt: time.Now()}
	atLimit(t, d, &g)
	if err := d.CreateFile(ctx, g); err != nil {
		t.Fatalf("CreateFile at the estimated limit: %v", err)
	}
}

// atLimit sets f.Content so that f's item is estimated at exactly the limit.
func atLimit(t *testing.T, d *Driver, f *driver.File) {
	f.Content = ""
	f.Content = strings.Repeat("x", maxItemBytes-itemSize(d.l.fileItem(*f))-len(attrContent))
	if n := itemSize(d.l.fileItem(*f)); n != maxItemBytes {
		t.Fatalf("estimate %d, want %d", n, maxItemBytes)
	}
}
