// Package firestore is the Google Cloud Firestore driver for agentmem: the
// nine [driver.Driver] primitives, an atomic [driver.Mutator] (one Commit
// with preconditions, a read-write transaction as its fallback), batched reads ([driver.BatchGetter]), a native
// scope read ([driver.ScopeReader]) and a file history ([driver.Historian]),
// all in one collection and with no index to set up.
//
//	client, err := gcfirestore.NewClient(ctx, "my-project") // cloud.google.com/go/firestore
//	d, err := firestore.New(ctx, client, "agentmem", nil)
//	s := store.New(d, nil)
//
// # Layout
//
// One collection holds three kinds of documents. A file row has the ID
// "f~" + its path with every "/" replaced by "~" (paths never contain "~",
// so the ID decodes back to the path) and the fields path, content,
// version, operationId, metadata (JSON, holding the store's lifetime keys
// with the caller's), and for tombstones tombstone and expiresAt (a file's
// own expiry is never a TTL: the store records it as a delete). A receipt has the ID "r~" + hex SHA-256 of the operation id
// (operation ids may hold "/" and run to 2 KB) and the fields id,
// fingerprint, kind, target, expected, version, existed, completed,
// createdAt, expiresAt; one that Mutate writes (always completed) packs
// all but id and expiresAt into one JSON field, receipt, next to its
// attempt token. A history entry has the ID "h~" + hex SHA-256 of its
// driver.HistoryKey and the fields key (that key), target (its path),
// version, previous, kind, content, operationId, metadata (JSON), time,
// expiresAt and pending (plus attempt when PutHistory made it). Receipts
// and entries carry no path field, so the range query on path that lists a
// scope can never return them; files and receipts carry no key field, so
// the range query on key that lists a history can never return them. See
// README.md for why this needs no composite index and how to enable the
// TTL policy on expiresAt.
//
// # Opening
//
// [New] (ctx, *firestore.Client, collection, *Options) uses the caller's
// client and leaves it open. Importing the package registers the store URL
// scheme "firestore" with store.Register: store.Open(ctx,
// "firestore://PROJECT/COLLECTION", nil) creates a client with Application
// Default Credentials (FIRESTORE_EMULATOR_HOST is honoured), which the
// store's Close closes; COLLECTION may be a path ("apps/a1/memory"). The
// parameters are database (default "(default)") and emulator_host
// (HOST:PORT of an emulator: no credentials, plain gRPC).
//
// # Errors
//
// A failed condition is [driver.ErrPrecondition], decided by gRPC code
// (ALREADY_EXISTS, FAILED_PRECONDITION, NOT_FOUND) and then confirmed by
// re-reading the document: the Go client re-sends a Commit that failed with
// UNAVAILABLE, so a condition failure may answer a retry of a write that had
// already landed. Where the re-read shows the driver's own write (its unique
// version, or its receipt), the call succeeds; where it cannot tell (a
// conditional delete whose document is gone) it returns an error that is
// not ErrPrecondition. One case is misreported: when the client re-sends a
// landed write and another writer changes the document before the re-read,
// the re-read shows neither state and the driver reports ErrPrecondition
// for a write that landed; writes with a store.Operation are exactly-once
// regardless, through their receipt. Transaction contention that outlasts
// [Options.MaxAttempts] is returned as the client's ABORTED error, never as
// ErrPrecondition. A file row over Firestore's 1 MiB document limit, or a
// path longer than 1,498 bytes (the document ID and indexed-string limit),
// is [driver.ErrTooLarge]. Context errors are wrapped so that errors.Is
// finds them.
//
// # Consistency
//
// Firestore reads and single-field queries are strongly consistent.
// Replace, delete and the receipt updates read the document and write it
// with an update-time precondition (two RPCs, no locks). [Driver.Mutate]
// writes the file change and the completed receipt in one Commit whose
// preconditions (receipt absent; file absent or at the update time the
// driver last saw for the expected version) make it atomic and
// conditional, in one RPC. When that update time is unknown, or the
// preconditions fail, it reads the file and the receipt without a
// transaction (one BatchGetDocuments) and either decides or commits again
// on the update time it read, so that contending writers never wait on
// locks; a plain delete (or one of a path that must be absent) decides in
// one read-write transaction (BeginTransaction, BatchGetDocuments,
// Commit) instead. If the client re-sends a landed Commit or re-runs the
// transaction after ABORTED, the function recognises its own earlier
// commit by the new version or by an attempt token stored in the receipt.
//
// The store refuses a create that would make a file and a folder share a
// name (store.ErrPathCollision) after reading the path's ancestors and
// listing below it, in requests before the create's transaction, not inside it:
// concurrent creates of "p/x.md" and "p/x.md/y.md" may both pass that
// check and both land. A create after the other has landed is refused.
//
// # Capabilities
//
// [driver.Mutator], [driver.BatchGetter] (BatchGetDocuments),
// [driver.ScopeReader] (one RunQuery per page) and [driver.Historian]:
// Mutate creates the history entry in the change's own Commit (no request
// more), ListHistory is one RunQuery per page, DeleteHistory removes up to
// 500 entries per query and Commit. With history on, a path longer than
// 1,473 bytes is [driver.ErrTooLarge] (its key would pass the 1,500 bytes
// of an indexed string). No [driver.Pruner]: receipts, tombstones and
// history entries expire through a Firestore TTL policy on the expiresAt
// field, which the operator enables once (see README.md).
package firestore
