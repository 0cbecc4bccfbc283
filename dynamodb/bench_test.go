package dynamodb_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// Every benchmark counts real HTTP attempts with an SDK middleware
// (opCounter) and reports them as req/op; latencies are compared with a
// raw SDK call in the same run (ratio).

// BenchmarkIdempotentWrite measures the write a notebook tool makes after
// its read: a write with an operation over the version just read (the read
// is not counted), against one raw PutItem of the same item size,
// conditional on its version (the raw conditional write).
func BenchmarkIdempotentWrite(b *testing.B) {
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			n := newOpCounter()
			raw := newClient(b)
			d := newDriver(b, newClient(b, n.middleware), nil)
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			s := store.New(dd, nil)
			content := "- lives in Hanoi\n- hates early flights\n"
			m, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: content})
			if err != nil {
				b.Fatal(err)
			}
			rawPath := "raw/main/MEMORY.md"
			if _, err := raw.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: aws.String(d.Table()),
				Item: dynamodb.FileItem(d, driver.File{Path: rawPath, Version: "v0", Content: content})}); err != nil {
				b.Fatal(err)
			}
			n.reset()
			var write, put []time.Duration
			i := 0
			for b.Loop() {
				i++
				t0 := time.Now()
				m, err = s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: content, Expected: m.Version,
					Operation: &store.Operation{ID: fmt.Sprintf("run-1/call-%d", i), Fingerprint: "fp"}})
				t1 := time.Now()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := raw.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: aws.String(d.Table()),
					Item:                      dynamodb.FileItem(d, driver.File{Path: rawPath, Version: fmt.Sprint("v", i), Content: content}),
					ConditionExpression:       aws.String("#v = :v"),
					ExpressionAttributeNames:  map[string]string{"#v": "v"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: fmt.Sprint("v", i-1)}},
				}); err != nil {
					b.Fatal(err)
				}
				write, put = append(write, t1.Sub(t0)), append(put, time.Since(t1))
			}
			b.ReportMetric(float64(n.total())/float64(i), "req/op")
			reportRatio(b, "write", write, "putitem", put)
		})
	}
}

// BenchmarkSearch searches a scope of 200 files: natively (one Query with
// contents), and with the scope read hidden (a listing Query plus
// BatchGetItem in chunks of 100).
func BenchmarkSearch(b *testing.B) {
	for _, mode := range []string{"scope-read", "batch-get"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			n := newOpCounter()
			d := newDriver(b, newClient(b, n.middleware), nil)
			var dd driver.Driver = d
			if mode == "batch-get" {
				dd = struct {
					driver.Driver
					driver.BatchGetter
				}{d, d}
			}
			s := store.New(dd, nil)
			loadFiles(b, d, "kamal/main/", 200)
			n.reset()
			for b.Loop() {
				res, err := s.Search(ctx, search.Request{Prefix: "kamal/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536})
				if err != nil || res.Scanned != 200 {
					b.Fatal(res.Scanned, err)
				}
			}
			b.ReportMetric(float64(n.total())/float64(b.N), "req/op")
		})
	}
}

// BenchmarkScopeListing lists one tenant's scope (20 files) in a table
// that holds only that tenant and in one that also holds 20,000 items of
// other tenants, alternating, and reports the latency ratio loaded/empty.
// scan-ns is one listing by Scan over the loaded table, for comparison.
func BenchmarkScopeListing(b *testing.B) {
	ctx := b.Context()
	n := newOpCounter()
	c := newClient(b, n.middleware)
	empty, loaded := newDriver(b, c, nil), newDriver(b, c, nil)
	for _, d := range []*dynamodb.Driver{empty, loaded} {
		loadFiles(b, d, "kamal/main/", 20)
	}
	for t := 0; t < 20000; t += 1000 {
		loadTenants(b, loaded, t, 1000)
	}
	se, sl := store.New(empty, nil), store.New(loaded, nil)
	// What the seed's layout (pk = f#<path>) pays for every listing: a
	// Scan of the whole table. Here: a prefix that spans partitions.
	var scans []time.Duration
	for range 3 {
		t0 := time.Now()
		if p, err := sl.ListPaths(ctx, "kamal", 100); err != nil || len(p) != 20 {
			b.Fatal(len(p), err)
		}
		scans = append(scans, time.Since(t0))
	}
	n.reset()
	var te, tl []time.Duration
	for b.Loop() {
		t0 := time.Now()
		pe, err := se.ListPaths(ctx, "kamal/main/", 100)
		t1 := time.Now()
		pl, err2 := sl.ListPaths(ctx, "kamal/main/", 100)
		t2 := time.Now()
		if err != nil || err2 != nil || len(pe) != 20 || len(pl) != 20 {
			b.Fatal(len(pe), len(pl), err, err2)
		}
		te, tl = append(te, t1.Sub(t0)), append(tl, t2.Sub(t1))
	}
	b.ReportMetric(float64(n.total())/float64(2*b.N), "req/op")
	reportRatio(b, "loaded", tl, "empty", te)
	b.ReportMetric(float64(median(scans).Nanoseconds()), "scan-ns")
}

// reportRatio reports the median latencies of two interleaved series and
// their ratio (medians, so that other processes on the machine do not
// skew it).
func reportRatio(b *testing.B, name string, xs []time.Duration, base string, ys []time.Duration) {
	mx, my := median(xs), median(ys)
	b.ReportMetric(float64(mx.Nanoseconds()), name+"-ns")
	b.ReportMetric(float64(my.Nanoseconds()), base+"-ns")
	b.ReportMetric(float64(mx)/float64(my), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// loadFiles writes count files under scope with BatchWriteItem.
func loadFiles(b *testing.B, d *dynamodb.Driver, scope string, count int) {
	items := make([]map[string]types.AttributeValue, 0, count)
	for i := range count {
		items = append(items, dynamodb.FileItem(d, driver.File{Path: fmt.Sprintf("%sf%03d.md", scope, i), Version: fmt.Sprint("v", i),
			Content: fmt.Sprintf("note %d about flights and trains", i)}))
	}
	batchWrite(b, d, items)
}

// loadTenants writes one MEMORY.md for each of count other tenants.
func loadTenants(b *testing.B, d *dynamodb.Driver, from, count int) {
	items := make([]map[string]types.AttributeValue, 0, count)
	for i := from; i < from+count; i++ {
		items = append(items, dynamodb.FileItem(d, driver.File{Path: fmt.Sprintf("tenant-%05d/main/MEMORY.md", i), Version: fmt.Sprint("v", i),
			Content: "- another tenant's fact\n"}))
	}
	batchWrite(b, d, items)
}

// batchWrite writes items 25 at a time on 4 workers, retrying unprocessed
// items.
func batchWrite(b *testing.B, d *dynamodb.Driver, items []map[string]types.AttributeValue) {
	ctx := b.Context()
	c := d.Client()
	work := make(chan []map[string]types.AttributeValue)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for chunk := range work {
				reqs := make([]types.WriteRequest, len(chunk))
				for i, it := range chunk {
					reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
				}
				for len(reqs) > 0 {
					out, err := c.BatchWriteItem(ctx, &awsdynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{d.Table(): reqs}})
					if err != nil {
						errs <- err
						return
					}
					reqs = out.UnprocessedItems[d.Table()]
				}
			}
		})
	}
	for i := 0; i < len(items); i += 25 {
		work <- items[i:min(i+25, len(items))]
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
