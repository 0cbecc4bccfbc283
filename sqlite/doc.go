// Package sqlite is the SQLite driver for agentmem: one file on disk, pure
// Go (no cgo), safe for several goroutines and several processes at once.
// It is the embedded durable default.
//
//	d, err := sqlite.New(ctx, "memory.db", nil)
//	s := store.New(d, nil)
//	defer s.Close()
//
// # Opening
//
// [New] (ctx, database path, *Options) returns the driver for store.New.
// Importing the package registers the store URL scheme "sqlite" with
// store.Register, so that store.Open opens a database by URL:
//
//	sqlite:///abs/path/memory.db     an absolute path
//	sqlite:memory.db                 relative to the working directory
//	?table=agent_memory              Options.Table
//	?busy_timeout=30s                Options.BusyTimeout (a Go duration)
//
// The engine is github.com/ncruces/go-sqlite3 (SQLite translated to Go
// from its Wasm build), through database/sql (the listings through its
// own statement API); the module README says why.
// Files live in one table (default "agent_memory"), receipts in
// "<table>_receipts" and history entries in "<table>_history" (created
// when a database made before it is opened); paths use SQLite's BINARY
// collation, which orders
// UTF-8 text by code point, and metadata is JSON text an application can
// query with json_extract. Timestamps are Unix milliseconds.
//
// # Errors
//
// A table name that is not 1–52 characters of [A-Za-z0-9_] starting with a
// letter or underscore fails with [ErrInvalidTable]; an empty path or
// ":memory:" fails with [ErrInvalidPath]. A conditional statement that
// changes no row is driver.ErrPrecondition, and the transaction around it
// is rolled back; a value over SQLite's length limit (SQLITE_TOOBIG, 1 GB
// by default) is driver.ErrTooLarge, nothing written. Every other error (SQLITE_BUSY after the busy timeout,
// I/O errors, a failed COMMIT) is returned as is, a *sqlite3.Error in the
// chain; the store treats it as an unknown outcome and settles it through
// receipts. Context errors stay visible to errors.Is.
//
// # Consistency
//
// The database runs in WAL mode, so readers never block the writer, with
// synchronous=FULL: a mutation that returned is on disk. Every change runs
// in one transaction taken with BEGIN IMMEDIATE (the write lock first, then
// the reads it depends on), so a compare-and-swap is serialised against
// every other connection and process; a waiting writer retries for
// Options.BusyTimeout. Within one process, writers also queue on a
// semaphore before asking SQLite, which saves the busy-retry sleeps.
//
// The store refuses a create that would make a file and a folder share a
// name (store.ErrPathCollision) after reading the path's ancestors and
// listing below it, in requests before the create's transaction, not inside it:
// concurrent creates of "p/x.md" and "p/x.md/y.md" may both pass that
// check and both land. A create after the other has landed is refused.
//
// # Capabilities
//
// [driver.Mutator] (receipt check, version check, change and completed
// receipt in one transaction), [driver.Appender] (receipt lookup, read
// and appended write in one BEGIN IMMEDIATE transaction: an append never
// conflicts), [driver.BatchGetter] (path IN (…)),
// [driver.ScopeReader] (one range scan of the primary key, content cut by
// substr), [driver.Historian] (entries keyed by driver.HistoryKey, listed
// by one range scan of that key; Mutate and Append insert the entry in
// their own transaction, so history costs a write no extra transaction)
// and [driver.Pruner] (expired receipts, tombstones and history entries,
// in transactions of [DefaultPruneBatch] rows).
package sqlite
