package firestore_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gcfirestore "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/firestore"
)

// rpcCounter counts the gRPC calls a client makes (unary and streaming)
// while it is on.
type rpcCounter struct {
	on       atomic.Bool
	mu       sync.Mutex
	byMethod map[string]int
}

func (c *rpcCounter) count(method string) {
	if !c.on.Load() {
		return
	}
	c.mu.Lock()
	c.byMethod[method[strings.LastIndexByte(method, '/')+1:]]++
	c.mu.Unlock()
}

func (c *rpcCounter) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c.count(method)
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (c *rpcCounter) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c.count(method)
	return streamer(ctx, desc, cc, method, opts...)
}

// total returns the calls counted and a per-method summary.
func (c *rpcCounter) total() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, parts := 0, []string{}
	for _, m := range slices.Sorted(maps.Keys(c.byMethod)) {
		n += c.byMethod[m]
		parts = append(parts, fmt.Sprintf("%s=%d", m, c.byMethod[m]))
	}
	return n, strings.Join(parts, " ")
}

// countingClient returns a client of the emulator whose RPCs are counted
// by interceptors. It dials through options rather than
// FIRESTORE_EMULATOR_HOST: with that variable set the client dials its own
// connection and ignores gRPC dial options.
func countingClient(b testing.TB) (*gcfirestore.Client, *rpcCounter) {
	host := emulator.Require(b, emulator.FirestoreHost)
	b.Setenv("FIRESTORE_EMULATOR_HOST", "")
	project := "demo-agentmem-bench-" + firestore.RandomID()
	b.Cleanup(func() { firestore.Wipe(b, host, project) })
	c := &rpcCounter{byMethod: map[string]int{}}
	client, err := gcfirestore.NewClient(b.Context(), project,
		option.WithEndpoint(host),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(c.unary)),
		option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(c.stream)),
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	return client, c
}

// benchModes runs fn with a store over a fresh collection, once with the
// whole driver and once with the nine primitives only.
func benchModes(b *testing.B, fn func(b *testing.B, client *gcfirestore.Client, d *firestore.Driver, s *store.Store, c *rpcCounter)) {
	client, c := countingClient(b)
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			d, err := firestore.New(b.Context(), client, "bench-"+mode+"-"+firestore.RandomID(), nil)
			if err != nil {
				b.Fatal(err)
			}
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			clear(c.byMethod)
			fn(b, client, d, store.New(dd, nil), c)
		})
	}
}

func reportRPCs(b *testing.B, c *rpcCounter) {
	n, detail := c.total()
	b.ReportMetric(float64(n)/float64(b.N), "rpc/op")
	b.Logf("N=%d RPCs: %s", b.N, detail)
}

// BenchmarkIdempotentWrite measures one tool-style write (a write with an
// operation over the version just read; the read is not counted) against
// one raw Update with an update-time precondition, interleaved in the same
// loop: rpc/op counts the write's RPCs, ratio = median write latency /
// median raw latency (medians, so that other processes on the shared
// machine do not skew it; mean-ratio is the ratio of the means).
func BenchmarkIdempotentWrite(b *testing.B) {
	benchModes(b, func(b *testing.B, client *gcfirestore.Client, d *firestore.Driver, s *store.Store, c *rpcCounter) {
		ctx := b.Context()
		m, err := s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- a fact\n"})
		if err != nil {
			b.Fatal(err)
		}
		raw := client.Collection(d.Collection().ID + "-raw").Doc("raw")
		wr, err := raw.Create(ctx, map[string]any{"content": "- a fact\n", "version": "0"})
		if err != nil {
			b.Fatal(err)
		}
		var write, rawTotal time.Duration
		var writes, raws []time.Duration
		i := 0
		for b.Loop() {
			i++
			b.StopTimer() // ns/op is the idempotent write alone
			t0 := time.Now()
			wr, err = raw.Update(ctx, []gcfirestore.Update{{Path: "content", Value: fmt.Sprint("- fact ", i)}, {Path: "version", Value: fmt.Sprint(i)}},
				gcfirestore.LastUpdateTime(wr.UpdateTime))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t1 := time.Now()
			c.on.Store(true)
			m, err = s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: fmt.Sprint("- fact ", i), Expected: m.Version,
				Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}})
			c.on.Store(false)
			if err != nil {
				b.Fatal(err)
			}
			write += time.Since(t1)
			rawTotal += t1.Sub(t0)
			writes, raws = append(writes, time.Since(t1)), append(raws, t1.Sub(t0))
		}
		reportRPCs(b, c)
		b.ReportMetric(float64(rawTotal.Nanoseconds())/float64(b.N), "raw-ns/op")
		b.ReportMetric(float64(write)/float64(rawTotal), "mean-ratio")
		b.ReportMetric(float64(median(writes).Nanoseconds()), "write-p50-ns")
		b.ReportMetric(float64(median(raws).Nanoseconds()), "raw-p50-ns")
		b.ReportMetric(float64(median(writes))/float64(median(raws)), "ratio")
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkHistory is what recording history costs an idempotent write
// (see contract.BenchHistory): backend calls and latency, history off and
// on, in both modes.
func BenchmarkHistory(b *testing.B) {
	client := firestore.EmulatorClients(b, 1)[0]
	contract.BenchHistory(b, func(b *testing.B) driver.Driver {
		d, err := firestore.New(b.Context(), client, "hist-"+firestore.RandomID(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkHistoryInterleaved measures the same idempotent write with
// history off and on, alternating in one loop so that the load of the
// shared machine falls on both alike: rpc-off/op and rpc-on/op count each
// write's RPCs, ratio = median latency on / median latency off (the
// contract benchmark runs them one after the other, which a loaded
// machine skews either way).
func BenchmarkHistoryInterleaved(b *testing.B) {
	client, c := countingClient(b)
	for _, mode := range []string{"full", "primitives"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			type side struct {
				s    *store.Store
				m    store.Mutation
				rpcs int
				lat  []time.Duration
			}
			var sides [2]*side
			for i, on := range []bool{false, true} {
				d, err := firestore.New(ctx, client, fmt.Sprintf("hist-%s-%v-%s", mode, on, firestore.RandomID()), nil)
				if err != nil {
					b.Fatal(err)
				}
				var dd driver.Driver = d
				if mode == "primitives" {
					dd = contract.Primitives(d)
				}
				opts := &store.Options{}
				if on {
					opts.History = &store.HistoryOptions{}
				}
				sd := &side{s: store.New(dd, opts)}
				if sd.m, err = sd.s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- a fact\n"}); err != nil {
					b.Fatal(err)
				}
				sides[i] = sd
			}
			i := 0
			for b.Loop() {
				i++
				for _, sd := range sides {
					clear(c.byMethod)
					c.on.Store(true)
					t0 := time.Now()
					m, err := sd.s.Write(ctx, store.WriteRequest{Path: "u/main/MEMORY.md", Content: fmt.Sprint("- fact ", i), Expected: sd.m.Version,
						Operation: &store.Operation{ID: fmt.Sprint("op-", i), Fingerprint: "fp"}, Metadata: map[string]string{"updated_by": "bench"}})
					sd.lat = append(sd.lat, time.Since(t0))
					c.on.Store(false)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := c.total()
					sd.m, sd.rpcs = m, sd.rpcs+n
				}
			}
			b.ReportMetric(float64(sides[0].rpcs)/float64(b.N), "rpc-off/op")
			b.ReportMetric(float64(sides[1].rpcs)/float64(b.N), "rpc-on/op")
			b.ReportMetric(float64(median(sides[0].lat).Nanoseconds()), "off-p50-ns")
			b.ReportMetric(float64(median(sides[1].lat).Nanoseconds()), "on-p50-ns")
			b.ReportMetric(float64(median(sides[1].lat))/float64(median(sides[0].lat)), "ratio")
		})
	}
}

// BenchmarkSearch searches a scope of 200 files (plus a subfolder and a
// neighbouring scope that must not be read).
func BenchmarkSearch(b *testing.B) {
	benchModes(b, func(b *testing.B, _ *gcfirestore.Client, d *firestore.Driver, s *store.Store, c *rpcCounter) {
		ctx := b.Context()
		put := func(p, content string) {
			if err := d.CreateFile(ctx, driver.File{Path: p, Content: content, Version: "v-" + p}); err != nil {
				b.Fatal(err)
			}
		}
		for i := range 200 {
			put(fmt.Sprintf("u/main/f%03d.md", i), fmt.Sprintf("note %d about flights and trains", i))
		}
		put("u/main/archive/old.md", "flights")
		put("u/other/x.md", "flights")
		c.on.Store(true)
		for b.Loop() {
			res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "flights", Limit: 10, MaxFiles: 1000, MaxChars: 4000, MaxFileChars: 65536})
			if err != nil {
				b.Fatal(err)
			}
			if res.Scanned != 200 {
				b.Fatalf("scanned %d files, want 200", res.Scanned)
			}
		}
		c.on.Store(false)
		reportRPCs(b, c)
	})
}
