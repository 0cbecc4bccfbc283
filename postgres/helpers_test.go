package postgres

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// testURL is the server the tests run on (scripts/emulators.sh).
func testURL(tb testing.TB) string {
	return emulator.Require(tb, emulator.PostgresURL)
}

// newPool returns a pool on url closed at the end of the test, with
// tracer (when non-nil) and at most maxConns connections (0 = default).
func newPool(tb testing.TB, url string, tracer *counter, maxConns int32) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

var tableSeq atomic.Int64

// uniqueTable returns a fresh table name and drops its tables (files,
// receipts, history) and their indexes when the test ends.
func uniqueTable(tb testing.TB, url string) string {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), tableSeq.Add(1))
	tb.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %s, %s, %s CASCADE`, quote(name+"_history"), quote(name+"_receipts"), quote(name))); err != nil {
			tb.Errorf("drop %s: %v", name, err)
		}
	})
	return name
}

// counter is a pgx tracer counting statements (Query, QueryRow, Exec) and
// the prepares pgx makes on a connection's first use of a statement: each
// is one round trip to the server.
type counter struct {
	mu       sync.Mutex
	paused   bool
	queries  int
	prepares int
	sql      []string
}

// pause stops (true) or resumes (false) counting.
func (c *counter) pause(p bool) {
	c.mu.Lock()
	c.paused = p
	c.mu.Unlock()
}

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		c.queries++
		c.sql = append(c.sql, d.SQL)
	}
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return ctx
}

func (c *counter) TracePrepareEnd(_ context.Context, _ *pgx.Conn, d pgx.TracePrepareEndData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !d.AlreadyPrepared && !c.paused {
		c.prepares++
	}
}

// take returns the counts since the last take and resets them.
func (c *counter) take() (queries, prepares int, sql []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	queries, prepares, sql = c.queries, c.prepares, c.sql
	c.queries, c.prepares, c.sql = 0, 0, nil
	return queries, prepares, sql
}
