package cosmosdb_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

// benchModes runs fn on a fresh container in both contract modes, with a
// client that counts HTTP requests.
func benchModes(b *testing.B, fn func(b *testing.B, s *store.Store, rq *requests)) {
	db := newDatabase(b)
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			raw, rq := db.countedDriver(b)
			var d driver.Driver = raw
			if mode == "primitives" {
				d = contract.Primitives(d)
			}
			fn(b, store.New(d, nil), rq)
		})
	}
}

// containerOf returns the container client under s's driver.
func containerOf(s *store.Store) *azcosmos.ContainerClient {
	d := s.Driver()
	if i, ok := d.(*contract.Interceptor); ok {
		d = i.Inner()
	}
	return d.(*cosmosdb.Driver).Container()
}

// rawReplace is the baseline: one ReplaceItem with If-Match on the ETag
// of the previous write, timed alone.
type rawReplace struct {
	c    *azcosmos.ContainerClient
	etag azcore.ETag
	n    int
	took time.Duration
}

func newRawReplace(b *testing.B, c *azcosmos.ContainerClient) *rawReplace {
	r := &rawReplace{c: c}
	resp, err := c.CreateItem(b.Context(), azcosmos.NewPartitionKeyString("raw"), []byte(`{"id":"raw","pk":"raw","n":0}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	r.etag = resp.ETag
	return r
}

func (r *rawReplace) once(b *testing.B) {
	r.n++
	body := fmt.Appendf(nil, `{"id":"raw","pk":"raw","n":%d}`, r.n)
	start := time.Now()
	resp, err := r.c.ReplaceItem(b.Context(), azcosmos.NewPartitionKeyString("raw"), "raw", body, &azcosmos.ItemOptions{IfMatchEtag: &r.etag})
	r.took += time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	r.etag = resp.ETag
}

// BenchmarkIdempotentWrite measures one tool-style write: a write with an
// operation over the version the tool just read. The read is neither
// counted nor timed. req/op counts HTTP requests; ratio is the write's
// latency over one raw ReplaceItem with If-Match, measured interleaved.
func BenchmarkIdempotentWrite(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, rq *requests) {
		ctx := b.Context()
		path := "u/main/MEMORY.md"
		if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "- a fact\n"}); err != nil {
			b.Fatal(err)
		}
		raw := newRawReplace(b, containerOf(s))
		var reqs int64
		var took time.Duration
		i := 0
		for b.Loop() {
			i++
			f, err := s.Read(ctx, path, 1<<16)
			if err != nil {
				b.Fatal(err)
			}
			before, start := rq.count(), time.Now()
			if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: fmt.Sprint("- fact ", i, "\n"), Expected: f.Version,
				Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}}); err != nil {
				b.Fatal(err)
			}
			took += time.Since(start)
			reqs += rq.count() - before
			raw.once(b)
		}
		b.ReportMetric(float64(reqs)/float64(i), "req/op")
		b.ReportMetric(float64(took.Microseconds())/float64(i), "µs/write")
		b.ReportMetric(float64(raw.took.Microseconds())/float64(raw.n), "µs/raw")
		b.ReportMetric(float64(took)/float64(raw.took), "ratio")
	})
}

// BenchmarkSearch searches a scope of 200 files; req/op counts HTTP
// requests per search.
func BenchmarkSearch(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, rq *requests) {
		ctx := b.Context()
		for i := range 200 {
			if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/f%03d.md", i), Content: fmt.Sprintf("note %d about flights and trains", i)}); err != nil {
				b.Fatal(err)
			}
		}
		before := rq.count()
		n := 0
		for b.Loop() {
			n++
			res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536})
			if err != nil {
				b.Fatal(err)
			}
			if res.Scanned != 200 {
				b.Fatalf("scanned %d files, want 200", res.Scanned)
			}
		}
		b.ReportMetric(float64(rq.count()-before)/float64(n), "req/op")
	})
}

// BenchmarkRead measures one bounded read; ratio is its latency over one
// raw ReadItem of the same item, measured interleaved.
func BenchmarkRead(b *testing.B) {
	benchModes(b, func(b *testing.B, s *store.Store, rq *requests) {
		ctx := b.Context()
		path := "u/main/MEMORY.md"
		if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "- a fact\n"}); err != nil {
			b.Fatal(err)
		}
		c := containerOf(s)
		var reqs int64
		var took, rawTook time.Duration
		n := 0
		for b.Loop() {
			n++
			before, start := rq.count(), time.Now()
			if _, err := s.Read(ctx, path, 65536); err != nil {
				b.Fatal(err)
			}
			took += time.Since(start)
			reqs += rq.count() - before
			start = time.Now()
			if _, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("u"), "fu~main~MEMORY.md", nil); err != nil {
				b.Fatal(err)
			}
			rawTook += time.Since(start)
		}
		b.ReportMetric(float64(reqs)/float64(n), "req/op")
		b.ReportMetric(float64(took)/float64(rawTook), "ratio")
	})
}
