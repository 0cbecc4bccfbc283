// Package memstore is the in-memory driver: the reference implementation of
// [driver.Driver] and every optional interface, for tests, examples and
// short-lived processes.
//
// # Errors
//
// The driver reports driver.ErrPrecondition for failed conditions,
// driver.ErrPathCollision for a file created where a file lies on its way
// or below it, and an error for any call after Close; nothing else fails.
//
// # Consistency
//
// One mutex serialises every call, so each primitive and [Driver.Mutate]
// are atomic, the file/folder check of a create included: concurrent
// creates of a file and a folder of one name never both land. Rows are deep-copied in and out: callers never share maps
// with the driver.
//
// # Capabilities
//
// [driver.Mutator] (with [driver.CollisionChecker]: Mutate refuses a
// colliding create under the same lock), [driver.Appender] (an append
// under the lock, which never conflicts), [driver.BatchGetter],
// [driver.ScopeReader], [driver.SnapshotReader] (a file and a listing under
// one lock), [driver.Pruner] and [driver.Historian] (entries in an
// ordered index, written with the change under the lock). Nothing
// survives the process.
//
// # Cost
//
// Paths are kept in a skip list, so a create or a delete costs O(log n) in
// the number of files and a listing or scope read costs what it returns.
// Expiring receipts and tombstones are kept in a heap by expiry, so
// [Driver.PruneExpired] costs what expired; it holds the mutex for
// [DefaultPruneBatch] rows at a time, so other calls run between batches.
//
// # Opening
//
// [New] (ctx, *Options) returns an empty driver for [store.New]:
//
//	d, err := memstore.New(ctx, nil)
//	if err != nil {
//		return err
//	}
//	s := store.New(d, nil)
//
// Importing the package registers the store URL scheme
// "mem" with [store.Register]: store.Open(ctx, "mem://", nil) opens an
// empty in-memory store (the URL takes no host or path; create=false is
// accepted, as a new in-memory store always exists).
package memstore
