package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the table name used when Options.Table is empty.
const DefaultTable = "agent_memory"

// ErrInvalidTable reports a table name that is not 1–52 characters of
// [A-Za-z0-9_] starting with a letter or an underscore. Derived names
// ("<table>_receipts", "<table>_hist_exp", …) must stay within
// PostgreSQL's 63-byte limit, and the name is the only identifier
// interpolated into SQL.
var ErrInvalidTable = errors.New("postgres: invalid table name")

var tablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,51}$`)

// Options configures a Driver. nil or the zero value means defaults.
type Options struct {
	// Table names the files table (default [DefaultTable]). The driver
	// also uses "<Table>_receipts", "<Table>_history", "<Table>_mutate"
	// and "<Table>_append" (functions) and three indexes named after it.
	// Names are quoted, so they are case-sensitive.
	Table string
}

// Driver is the PostgreSQL driver. It is safe for concurrent use.
type Driver struct {
	pool  *pgxpool.Pool
	owned bool
	sql   statements

	pruneBatch int    // rows per prune statement (DefaultPruneBatch)
	pruneHook  func() // tests: called after each prune statement
}

// DefaultPruneBatch is how many rows one statement of
// [Driver.PruneExpired] deletes.
const DefaultPruneBatch = 1000

var (
	_ driver.Driver           = (*Driver)(nil)
	_ driver.Mutator          = (*Driver)(nil)
	_ driver.CollisionChecker = (*Driver)(nil)
	_ driver.BatchGetter      = (*Driver)(nil)
	_ driver.ScopeReader      = (*Driver)(nil)
	_ driver.SnapshotReader   = (*Driver)(nil)
	_ driver.Pruner           = (*Driver)(nil)
)

func tableOf(opts *Options) (string, error) {
	t := DefaultTable
	if opts != nil && opts.Table != "" {
		t = opts.Table
	}
	if !tablePattern.MatchString(t) {
		return "", fmt.Errorf("%w: %q", ErrInvalidTable, t)
	}
	return t, nil
}

// Open connects a new pool to url (a libpq URL or key=value string, as
// pgxpool.ParseConfig accepts), creates the schema if needed and returns a
// driver that owns the pool: Close closes it. It fails with
// [ErrInvalidTable] before connecting, and with an error for an empty url
// (libpq would read every setting from PG* variables; pass them as
// "postgres://" on purpose if that is meant).
func Open(ctx context.Context, url string, opts *Options) (*Driver, error) {
	table, err := tableOf(opts)
	if err != nil {
		return nil, err
	}
	if url == "" {
		return nil, errors.New(`postgres: Open needs a connection URL (got ""): pass postgres://user@host/db, or "postgres://" to take every setting from the PG* variables`)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn's parse errors redact the password.
		return nil, fmt.Errorf("postgres: fix the connection URL (a postgres:// URL or key=value string): %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: cannot create a connection pool: %w", err)
	}
	d, err := newDriver(ctx, pool, table, true)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

// New returns a driver over a pool the caller owns (Close leaves it open),
// creating the schema if needed. It fails with [ErrInvalidTable] before
// using the pool, and with an error for a nil pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Driver, error) {
	table, err := tableOf(opts)
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, errors.New("postgres: New needs a pool (got nil): pass a *pgxpool.Pool, or call Open with a URL")
	}
	return newDriver(ctx, pool, table, false)
}

func newDriver(ctx context.Context, pool *pgxpool.Pool, table string, owned bool) (*Driver, error) {
	d := &Driver{pool: pool, owned: owned, sql: newStatements(table), pruneBatch: DefaultPruneBatch}
	if err := ensureSchema(ctx, pool, table); err != nil {
		return nil, err
	}
	return d, nil
}

// Table returns the name of the files table.
func (d *Driver) Table() string { return d.sql.table }

// Pool returns the pool the driver uses.
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Close implements driver.Driver: it closes the pool if Open created it.
func (d *Driver) Close() error {
	if d.owned {
		d.pool.Close()
	}
	return nil
}
