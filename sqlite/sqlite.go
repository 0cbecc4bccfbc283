package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// DefaultTable is the table name used when Options.Table is empty.
const DefaultTable = "agent_memory"

// DefaultBusyTimeout is how long a writer waits for another connection's
// write lock by default.
const DefaultBusyTimeout = 30 * time.Second

var tablePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,51}$`)

// Options configures a Driver. nil or the zero value means defaults.
type Options struct {
	// Table names the files table; empty means [DefaultTable]. Receipts go to
	// "<Table>_receipts" and history entries to "<Table>_history". Names
	// are quoted, so they are case-sensitive.
	Table string
	// BusyTimeout is how long a write waits for the lock another
	// connection or process holds; zero (or a negative value) means
	// [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// NoCreate makes New open an existing store only: the database file
	// must exist and hold the files table (an older schema around it is
	// still brought up to date), or New fails with an error wrapping
	// driver.ErrStoreNotFound and creates nothing. false, the default,
	// creates the file and the schema when missing.
	NoCreate bool
}

// Driver is the SQLite driver. It is safe for concurrent use.
type Driver struct {
	db     *sql.DB
	path   string
	opts   Options
	sql    statements
	writer chan struct{} // one in-process writer at a time

	pruneBatch int                 // rows per prune transaction (DefaultPruneBatch)
	pruneHook  func()              // tests: called after each prune (or DeleteHistory) transaction
	pruneHold  func(time.Duration) // benchmarks: how long each prune transaction held the writer slot
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

// Name implements driver.Namer: "sqlite", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "sqlite" }

// New opens (creating if needed) the database file at path, in WAL mode,
// and creates the schema if needed; with Options.NoCreate it opens an
// existing store only (driver.ErrStoreNotFound otherwise). The directory
// must exist (an error wrapping fs.ErrNotExist says so otherwise). A nil
// ctx or an empty path fails with an error wrapping
// driver.ErrNilArgument (the empty path also [ErrInvalidPath]), a bad
// table name with [ErrInvalidTable], before the file is touched. The
// driver owns the database handle: Close closes it. opts may be nil, which
// means defaults.
func New(ctx context.Context, path string, opts *Options) (*Driver, error) {
	return open(ctx, path, opts, nil)
}

// open is New with a hook run on every new connection (tests install
// statement counters with it).
func open(ctx context.Context, path string, opts *Options, init func(*sqlite3.Conn) error) (*Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("sqlite: pass a context to New, not nil: %w", driver.ErrNilArgument)
	}
	o := Options{Table: DefaultTable, BusyTimeout: DefaultBusyTimeout}
	if opts != nil {
		if opts.Table != "" {
			o.Table = opts.Table
		}
		if opts.BusyTimeout > 0 {
			o.BusyTimeout = opts.BusyTimeout
		}
		o.NoCreate = opts.NoCreate
	}
	if !tablePattern.MatchString(o.Table) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidTable, o.Table)
	}
	if path == "" {
		return nil, fmt.Errorf("sqlite: pass the path of a database file to New, not an empty string: %w (%w)", ErrInvalidPath, driver.ErrNilArgument)
	}
	if path == ":memory:" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidPath, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: cannot open the database file %s: %w", path, err)
	}
	if o.NoCreate {
		if err := checkFile(abs); err != nil {
			return nil, err
		}
	} else if err := checkDir(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("sqlite: cannot open the database file %s: %w", abs, err)
	}
	db, err := sqlitedriver.Open(dsn(abs, o.BusyTimeout, o.NoCreate), init)
	if err != nil {
		return nil, err
	}
	// Each connection is a SQLite instance of its own; writers queue on
	// the semaphore before taking one, so a few serve any load.
	conns := max(4, runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	d := &Driver{db: db, path: abs, opts: o, sql: newStatements(o.Table), writer: make(chan struct{}, 1), pruneBatch: DefaultPruneBatch}
	if err := d.enableWAL(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if o.NoCreate {
		if err := d.checkTable(ctx); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if err := d.createSchema(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return d, nil
}

// dsn is the URI of the database file with the settings every connection
// gets: the busy timeout first, full fsync on commit, BEGIN IMMEDIATE for
// transactions, and with noCreate mode=rw (SQLite then never creates the
// file). WAL is a property of the file, set once by enableWAL. The
// busy timeout is rounded up to whole milliseconds, SQLite's unit: a
// positive timeout must never become 0, which turns the busy handler off.
func dsn(path string, busy time.Duration, noCreate bool) string {
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	if !strings.HasPrefix(escaped, "/") {
		escaped = "/" + escaped // a Windows drive letter
	}
	mode := ""
	if noCreate {
		mode = "&mode=rw"
	}
	return fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=synchronous(full)&_txlock=immediate%s",
		escaped, int64((busy+time.Millisecond-1)/time.Millisecond), mode)
}

// enableWAL switches the file to WAL mode (a no-op once it is). The switch
// needs the file to itself and SQLite reports SQLITE_BUSY at once, without
// its busy handler, when other processes open the new file at the same
// moment, so it is retried here for up to the busy timeout.
func (d *Driver) enableWAL(ctx context.Context) error {
	deadline := time.Now().Add(d.opts.BusyTimeout)
	for {
		var mode string
		err := d.db.QueryRowContext(ctx, `PRAGMA journal_mode=wal`).Scan(&mode)
		switch {
		case err == nil && mode == "wal":
			return nil
		case err == nil:
			return fmt.Errorf("sqlite: %s stays in journal mode %q, not WAL", d.path, mode)
		case !errors.Is(err, sqlite3.BUSY) || time.Now().After(deadline):
			return fmt.Errorf("sqlite: cannot open the database file %s (switching it to WAL mode failed): %w", d.path, fail(ctx, err))
		}
		t := time.NewTimer(time.Duration(1+rand.IntN(5)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// checkDir reports why dir cannot hold the database file: it does not
// exist (wrapping fs.ErrNotExist) or is not a directory.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist (create it first): %w", dir, err)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// checkFile reports, for Options.NoCreate, a database file that does not
// exist (wrapping driver.ErrStoreNotFound) or is not a regular file.
func checkFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: the database file %s does not exist (create it first, or open it without create=false, which creates it): %w", path, driver.ErrStoreNotFound)
	case err != nil:
		return fmt.Errorf("sqlite: cannot open the database file %s: %w", path, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("sqlite: cannot open the database file %s: it is not a regular file", path)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (d *Driver) Path() string { return d.path }

// Table returns the name of the files table.
func (d *Driver) Table() string { return d.opts.Table }

// DB returns the database/sql handle the driver uses, for an application's
// own queries (the schema is in the module README).
func (d *Driver) DB() *sql.DB { return d.db }

// Close implements driver.Driver: it closes the database.
func (d *Driver) Close() error { return d.db.Close() }

// lockWriter waits for this process's writer slot; release frees it.
func (d *Driver) lockWriter(ctx context.Context) (release func(), err error) {
	select {
	case d.writer <- struct{}{}:
		return func() { <-d.writer }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// inTx runs fn in one BEGIN IMMEDIATE transaction and commits it when fn
// returns nil; otherwise it rolls back and returns fn's error.
func (d *Driver) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return d.inTxChecked(ctx, nil, fn)
}

// inTxChecked is inTx for a conditional change. When this process's writer
// slot is taken, check runs first, without the slot: a compare-and-swap
// that has already lost its race fails at once instead of queueing behind,
// and then holding up, the writers that won. When the slot is free there is
// nothing to save, so check is skipped (the transaction checks again).
func (d *Driver) inTxChecked(ctx context.Context, check func() error, fn func(tx *sql.Tx) error) error {
	var release func()
	select {
	case d.writer <- struct{}{}:
		release = func() { <-d.writer }
	default:
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		var err error
		if release, err = d.lockWriter(ctx); err != nil {
			return err
		}
	}
	defer release()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(ctx, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return fail(ctx, tx.Commit())
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// millis is t as Unix milliseconds, or NULL for the zero time.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanFile scans the file columns (fileCols), after the columns first
// scans into, if any.
func scanFile(row scanner, first ...any) (*driver.File, error) {
	var f driver.File
	var meta sql.NullString
	var expires sql.NullInt64
	if err := row.Scan(append(first, &f.Path, &f.Content, &f.Version, &f.OperationID, &meta, &f.Tombstone, &expires)...); err != nil {
		return nil, err
	}
	return finishFile(&f, meta, expires)
}

// finishFile completes a file read from its columns: its metadata (JSON
// text or NULL) decoded, a tombstone's expiry (Unix milliseconds or NULL).
func finishFile(f *driver.File, meta sql.NullString, expires sql.NullInt64) (*driver.File, error) {
	if meta.Valid {
		if err := json.Unmarshal([]byte(meta.String), &f.Metadata); err != nil {
			return nil, fmt.Errorf("sqlite: metadata of %q: %w", f.Path, err)
		}
	}
	if expires.Valid {
		f.ExpiresAt = time.UnixMilli(expires.Int64)
	}
	return f, nil
}

func scanReceipt(row scanner) (*driver.Receipt, error) {
	var r driver.Receipt
	var kind string
	var created, expires int64
	if err := row.Scan(&r.ID, &r.Fingerprint, &kind, &r.Path, &r.Expected, &r.Version, &r.Existed, &r.Completed, &created, &expires); err != nil {
		return nil, err
	}
	r.Kind, r.CreatedAt, r.ExpiresAt = driver.Kind(kind), time.UnixMilli(created), time.UnixMilli(expires)
	return &r, nil
}
