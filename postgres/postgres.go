package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the table name used when Options.Table is empty.
const DefaultTable = "agent_memory"

var tablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,51}$`)

// Options configures a Driver. nil or the zero value means defaults: the
// zero value of each field is its default.
type Options struct {
	// Table names the files table; empty means [DefaultTable]. The driver
	// also uses "<Table>_receipts", "<Table>_history", "<Table>_mutate"
	// and "<Table>_append" (functions) and three indexes named after it.
	// Names are quoted, so they are case-sensitive.
	Table string
	// NoCreate makes New open an existing store only: the files table must
	// exist (an older schema around it, such as a missing history table or
	// an older version of the functions, is still brought up to date, as
	// without NoCreate), or New fails with an error wrapping
	// driver.ErrStoreNotFound and creates nothing. false, the default,
	// creates the schema when missing.
	NoCreate bool
}

// Driver is the PostgreSQL driver. It is safe for concurrent use.
type Driver struct {
	pool  *pgxpool.Pool
	owned bool
	sql   statements

	pruneBatch int    // rows per prune statement (DefaultPruneBatch)
	pruneHook  func() // tests: called after each prune statement
}

var (
	_ driver.Driver           = (*Driver)(nil)
	_ driver.Mutator          = (*Driver)(nil)
	_ driver.CollisionChecker = (*Driver)(nil)
	_ driver.BatchGetter      = (*Driver)(nil)
	_ driver.ScopeReader      = (*Driver)(nil)
	_ driver.SnapshotReader   = (*Driver)(nil)
	_ driver.Pruner           = (*Driver)(nil)
	_ driver.Historian        = (*Driver)(nil)
	_ driver.Appender         = (*Driver)(nil)
	_ driver.Namer            = (*Driver)(nil)
)

// Name implements driver.Namer: "postgres", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "postgres" }

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

// openPool connects a new pool to url (a libpq URL or key=value string, as
// pgxpool.ParseConfig accepts), creates the schema if needed and returns a
// driver that owns the pool: Close closes it. It fails with
// [ErrInvalidTable] before connecting, and with an error wrapping
// driver.ErrNilArgument for a nil ctx or an empty url (libpq would read
// every setting from PG* variables; pass them as "postgres://" on purpose
// if that is meant).
func openPool(ctx context.Context, url string, opts *Options) (*Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("postgres: pass a context, not nil: %w", driver.ErrNilArgument)
	}
	table, err := tableOf(opts)
	if err != nil {
		return nil, err
	}
	if url == "" {
		return nil, fmt.Errorf(`postgres: pass a connection URL such as postgres://user@host/db, or "postgres://" to take every setting from the PG* variables, not "": %w`, driver.ErrNilArgument)
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
	d, err := newDriver(ctx, pool, table, opts, true)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

// New returns a driver over a pool the caller owns (Close leaves it open),
// creating the schema if needed; with Options.NoCreate it opens an
// existing store only (driver.ErrStoreNotFound otherwise). It fails with
// an error wrapping driver.ErrNilArgument for a nil ctx or a nil pool, and
// with [ErrInvalidTable], before using the pool. opts may be nil, which
// means defaults.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("postgres: pass a context to New, not nil: %w", driver.ErrNilArgument)
	}
	table, err := tableOf(opts)
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, fmt.Errorf("postgres: pass a *pgxpool.Pool to New, not nil (or store.Open a postgres:// URL): %w", driver.ErrNilArgument)
	}
	return newDriver(ctx, pool, table, opts, false)
}

func newDriver(ctx context.Context, pool *pgxpool.Pool, table string, opts *Options, owned bool) (*Driver, error) {
	d := &Driver{pool: pool, owned: owned, sql: newStatements(table), pruneBatch: DefaultPruneBatch}
	if opts != nil && opts.NoCreate {
		if err := checkTable(ctx, pool, d.sql); err != nil {
			return nil, err
		}
	}
	if err := ensureSchema(ctx, pool, table); err != nil {
		return nil, err
	}
	return d, nil
}

// Table returns the name of the files table.
func (d *Driver) Table() string { return d.sql.table }

// Pool returns the pool the driver uses.
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Close implements driver.Driver: it closes the pool if the driver opened
// it (a store URL).
func (d *Driver) Close() error {
	if d.owned {
		d.pool.Close()
	}
	return nil
}

// callArgs returns the arguments of a call of the mutation function
// (full) or of the append function: file's, given the content columns of
// content and the metadata as JSON, then the receipt's and the history
// entry's (historyArgs).
func callArgs(metadata map[string]string, content string, file func(text string, raw []byte, meta any) []any,
	r *driver.Receipt, h *driver.HistoryEntry, full bool) ([]any, error) {
	meta, err := driver.MetadataJSON(metadata)
	if err != nil {
		return nil, err
	}
	text, raw := contentArgs(content)
	args := file(text, raw, meta)
	switch {
	case r == nil && full:
		args = append(args, make([]any, 10)...)
	case r == nil:
		args = append(args, make([]any, 4)...)
	case full:
		args = append(args, r.ID, r.Fingerprint, string(r.Kind), r.Path, r.Expected, r.Version, r.Existed, r.Completed, r.CreatedAt, r.ExpiresAt)
	default: // the append function fills in the rest
		args = append(args, r.ID, r.Fingerprint, r.CreatedAt, r.ExpiresAt)
	}
	hist, err := historyArgs(h, content, full)
	if err != nil {
		return nil, err
	}
	return append(args, hist...), nil
}

// call runs the mutation or append function q with args and returns the
// receipt of an operation already known. When the schema is gone (dropped
// while this process ran, or made before the function existed), nothing
// was executed: it creates the schema again and retries once.
func (d *Driver) call(ctx context.Context, q string, args []any) ([]*driver.Receipt, error) {
	run := func() ([]*driver.Receipt, error) {
		rows, err := d.pool.Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*driver.Receipt, error) { return scanReceipt(row) })
	}
	existing, err := run()
	if schemaMissing(err) {
		if err = recreateSchema(ctx, d.pool, d.sql.table); err == nil {
			existing, err = run()
		}
	}
	return existing, err
}

// contentArgs returns the values of the content and content_bytes
// columns for s: text cannot hold NUL, so content with a NUL is kept whole
// as bytes, and its text shows each NUL as U+FFFD.
func contentArgs(s string) (string, []byte) {
	if strings.IndexByte(s, 0) < 0 {
		return s, nil
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD"), []byte(s)
}

// timeArg is t, or NULL for the zero time.
func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// scanFile scans the file columns (fileCols), after the columns first
// scans into, if any.
func scanFile(row pgx.Row, first ...any) (*driver.File, error) {
	var f driver.File
	var meta *string
	var expires *time.Time
	var raw []byte
	if err := row.Scan(append(first, &f.Path, &f.Content, &raw, &f.Version, &f.OperationID, &meta, &f.Tombstone, &expires)...); err != nil {
		return nil, err
	}
	if raw != nil {
		f.Content = string(raw)
	}
	if meta != nil {
		if err := json.Unmarshal([]byte(*meta), &f.Metadata); err != nil {
			return nil, fmt.Errorf("postgres: metadata of %q: %w", f.Path, err)
		}
	}
	if expires != nil {
		f.ExpiresAt = *expires
	}
	return &f, nil
}

func scanReceipt(row pgx.Row) (*driver.Receipt, error) {
	var r driver.Receipt
	var kind string
	if err := row.Scan(&r.ID, &r.Fingerprint, &kind, &r.Path, &r.Expected, &r.Version, &r.Existed, &r.Completed, &r.CreatedAt, &r.ExpiresAt); err != nil {
		return nil, err
	}
	r.Kind = driver.Kind(kind)
	return &r, nil
}

func clampInt32(n int) int {
	return min(n, math.MaxInt32)
}
