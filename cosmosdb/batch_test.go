package cosmosdb_test

import (
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestEmulatorBatchAtomic checks what Driver.Mutate relies on: a
// TransactionalBatch whose second operation fails leaves its first
// unapplied, and the response says so (Success false, 207, the failing
// operation's status and 424 for the others). @vercel/cosmosdb-server
// applied batch operations one by one and kept the first; see the atomic
// batch patch in scripts/emulators.sh.
func TestEmulatorBatchAtomic(t *testing.T) {
	ctx := t.Context()
	c := newDatabase(t).newDriver(t).Container()
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"taken","pk":"p","n":0}`), nil); err != nil {
		t.Fatal(err)
	}
	old, err := c.ReadItem(ctx, pk, "taken", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := c.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"fresh","pk":"p"}`), nil)
	b.ReplaceItem("taken", []byte(`{"id":"taken","pk":"p","n":1}`), nil)
	b.CreateItem([]byte(`{"id":"taken","pk":"p"}`), nil) // 409: fails the batch
	resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var codes []int32
	for _, r := range resp.OperationResults {
		codes = append(codes, r.StatusCode)
	}
	if resp.Success || resp.RawResponse.StatusCode != http.StatusMultiStatus || len(codes) != 3 ||
		codes[0] != http.StatusFailedDependency || codes[1] != http.StatusFailedDependency || codes[2] != http.StatusConflict {
		t.Errorf("failed batch: success %v, HTTP %d, operations %v; want false, 207, [424 424 409]", resp.Success, resp.RawResponse.StatusCode, codes)
	}
	if _, err := c.ReadItem(ctx, pk, "fresh", nil); err == nil {
		t.Error("the first operation of a failed batch was applied")
	}
	now, err := c.ReadItem(ctx, pk, "taken", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(now.Value) != string(old.Value) || now.ETag != old.ETag {
		t.Errorf("a failed batch changed an item: %s, want %s", now.Value, old.Value)
	}
	// The same batch without the failing operation applies entirely.
	b = c.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"fresh","pk":"p"}`), nil)
	b.ReplaceItem("taken", []byte(`{"id":"taken","pk":"p","n":1}`), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &old.ETag})
	if resp, err = c.ExecuteTransactionalBatch(ctx, b, nil); err != nil || !resp.Success {
		t.Fatalf("batch = %+v, %v", resp.OperationResults, err)
	}
	if _, err := c.ReadItem(ctx, pk, "fresh", nil); err != nil {
		t.Errorf("a committed batch's create: %v", err)
	}
}
