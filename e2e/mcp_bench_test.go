package e2e_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// BenchmarkMCPToolCalls measures MCP tool calls end to end: an in-memory
// client session, the agentmem MCP server, the notebook and a real
// backend. Each op is one tools/call; it reports calls/s and the p50 and
// p99 latency of one call in µs. write appends a line with its own
// idempotency key (a new file every 100 lines, so files stay under the
// size limit); read reads a file of 100 lines.
func BenchmarkMCPToolCalls(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) driver.Driver
	}{
		{"sqlite", func(b *testing.B) driver.Driver {
			return open(b, "sqlite://"+filepath.ToSlash(filepath.Join(b.TempDir(), "memory.db")))
		}},
		{"postgres", func(b *testing.B) driver.Driver { return postgresDriver(b) }},
	}
	for _, be := range backends {
		b.Run(be.name+"/write", func(b *testing.B) {
			cs := mcpSession(b, be.open(b))
			benchCalls(b, func(i int) *mcpsdk.CallToolParams {
				return &mcpsdk.CallToolParams{Name: "write_memory",
					Arguments: map[string]any{"content": fmt.Sprintf("- bench line %d", i),
						"file": fmt.Sprintf("bench-%d.md", i/100), "old_text": nil},
					Meta: mcpsdk.Meta{agentmemmcp.MetaIdempotencyKey: fmt.Sprintf("bench/%d", i)}}
			}, cs)
		})
		b.Run(be.name+"/read", func(b *testing.B) {
			cs := mcpSession(b, be.open(b))
			for i := range 100 {
				res, err := cs.CallTool(b.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
					Arguments: map[string]any{"content": fmt.Sprintf("- bench line %d", i), "file": "bench.md", "old_text": nil}})
				if err != nil || res.IsError {
					b.Fatalf("seed write %d: %v %v", i, err, res)
				}
			}
			params := &mcpsdk.CallToolParams{Name: "read_memory", Arguments: map[string]any{"file": "bench.md"}}
			benchCalls(b, func(int) *mcpsdk.CallToolParams { return params }, cs)
		})
	}
}

// mcpSession serves a notebook over d to user "bench" and returns an
// in-memory client session to it, closed when b ends.
func mcpSession(b *testing.B, d driver.Driver) *mcpsdk.ClientSession {
	b.Helper()
	mem, err := memory.New(store.New(d, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("bench")})
	if err != nil {
		b.Fatal(err)
	}
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(b.Context(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchCalls makes b.N calls, params(i) the i-th, failing on any error,
// and reports calls/s, p50-µs and p99-µs.
func benchCalls(b *testing.B, params func(i int) *mcpsdk.CallToolParams, cs *mcpsdk.ClientSession) {
	b.Helper()
	var durs []time.Duration
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		p := params(i)
		t0 := time.Now()
		res, err := cs.CallTool(b.Context(), p)
		durs = append(durs, time.Since(t0))
		if err != nil {
			b.Fatalf("%s %d: %v", p.Name, i, err)
		}
		if res.IsError {
			b.Fatalf("%s %d: tool error %v", p.Name, i, res.Content)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	pct := func(q float64) float64 {
		return float64(durs[min(len(durs)-1, int(q*float64(len(durs))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(float64(len(durs))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
