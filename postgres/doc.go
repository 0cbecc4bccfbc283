// Package postgres is the PostgreSQL driver for agentmem, over a pgx/v5
// connection pool.
//
//	d, err := postgres.New(ctx, pool, &postgres.Options{Table: "agent_memory"})
//	s := store.New(d, nil)
//	defer s.Close()
//
//	// or: s, err := store.Open(ctx, "postgres://user@host/db", nil) // owns its pool
//
// Files live in one table (default "agent_memory"), receipts in
// "<table>_receipts", history entries in "<table>_history", and the atomic
// mutation and append are the PL/pgSQL functions "<table>_mutate" and
// "<table>_append"; all are created on first use (see the module README
// for the schema). Paths use COLLATE "C", so listings are in
// code-point order like every other backend, and metadata is a JSONB column
// applications can query.
//
// # Opening
//
// [New] (ctx, *pgxpool.Pool, *Options) uses the caller's pool and leaves it
// open; with Options.NoCreate it opens an existing table only. Importing
// the package registers the store URL schemes "postgres"
// and "postgresql" with store.Register: store.Open(ctx,
// "postgres://user@host:5432/db?sslmode=disable&table=agent_memory", nil)
// passes the URL to pgx (libpq's parameters; the password from the URL, a
// PGPASSWORD variable or ~/.pgpass) after taking out table
// (Options.Table), and the store's Close closes the pool.
//
// # Errors
//
// A table name that is not 1–52 characters of [A-Za-z0-9_] starting with a
// letter or underscore fails with [ErrInvalidTable] before anything
// connects. A failed condition is reported as driver.ErrPrecondition: zero
// rows from a conditional statement, or the SQLSTATE [CodePrecondition]
// raised by the mutation function (which rolls the whole statement back).
// Every other server or network error is returned as is (a
// *pgconn.PgError in the chain for errors.As); the store treats it as an
// unknown outcome and settles it through receipts. Context errors stay
// visible to errors.Is.
//
// # Consistency
//
// Every primitive is one statement, hence atomic. [Driver.Mutate] is one
// round trip: the receipt insert, the version check, the change and the
// completed receipt run inside one function call, which is one implicit
// transaction; concurrent attempts of one operation wait on the receipt's
// unique index, and compare-and-swap updates re-check the version on the
// latest row (READ COMMITTED, PostgreSQL's default; stricter isolation
// turns races into serialization errors, which the store reports). The
// schema is created once per process and table, under
// pg_advisory_xact_lock, so processes starting together are safe.
//
// The store refuses a create that would make a file and a folder share a
// name (store.ErrPathCollision) after reading the path's ancestors and
// listing below it, in requests before the create's statement, not inside it:
// concurrent creates of "p/x.md" and "p/x.md/y.md" may both pass that
// check and both land. A create after the other has landed is refused.
//
// # Capabilities
//
// [driver.Mutator] (one round trip per mutation), [driver.Appender] (one
// round trip per append, queued on the file's row), [driver.BatchGetter]
// (path = ANY($1)), [driver.ScopeReader] (one index range scan that cuts
// content with left()), [driver.SnapshotReader] (a file and a listing in
// one statement), [driver.Historian] (history entries are rows of
// "<table>_history" keyed by driver.HistoryKey: a file's or a folder's
// history is a range scan of its primary key, and the mutation and append
// functions insert the entry in their own call, so history on costs no
// round trip) and [driver.Pruner] (expired receipts, tombstones and
// history entries, [DefaultPruneBatch] rows per statement).
package postgres
