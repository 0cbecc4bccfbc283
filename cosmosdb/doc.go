// Package cosmosdb is the Azure Cosmos DB (NoSQL API) driver for agentmem:
// the nine conditional primitives of [driver.Driver] over one container,
// with CreateItem for creates and ETag If-Match for every replace and
// delete, an atomic [driver.Mutator] (one TransactionalBatch), plus the
// batched and scope reads that search uses.
//
//	client, _ := azcosmos.NewClientWithKey(endpoint, cred, nil)
//	d, err := cosmosdb.New(ctx, client, "agentmem", "memory", nil)
//	s := store.New(d, nil)
//
// # Layout
//
// One container partitioned on /pk ([PartitionKeyPath]). A file is an item
// with id "f" + its path with "/" written as "~" (hashed when longer than
// 255 characters) in the partition of its first path segment, so every
// scope of a tenant ("tenant/agent/") is one logical partition. Top-level
// files share the partition "/". A receipt is an item whose id is "r" +
// the SHA-256 of the operation id; its partition key is the same id when
// the primitive path reserved it, and the file's partition when
// [Driver.Mutate] wrote it in one batch with the file. A history entry
// ([driver.Historian]) is an item in its file's partition whose id is "v"
// + its key ([driver.HistoryKey], "/" and the space written as "~"; "w" +
// a SHA-256 when too long) and whose indexed path field holds that key,
// so history is listed like files, with no index of its own. The module
// README explains the choice against the /id partitioning of the Python
// seed.
//
// # Opening
//
// [New] (ctx, *azcosmos.Client, database, container, *Options) uses the
// caller's client, with any credential (Entra ID through azidentity
// included). Importing the package registers the store URL scheme
// "cosmosdb" with store.Register: store.Open(ctx,
// "cosmosdb://ACCOUNT.documents.azure.com/DATABASE/CONTAINER", nil) reads
// the account key from [KeyEnv] (AGENTMEM_COSMOS_KEY; never from the URL)
// and creates the database and container when absent. The parameter
// insecure=1 speaks http, for a local emulator. The opener does not pull
// in azidentity (and its dependencies) for every user of this module;
// build the client yourself for Entra ID.
//
// # Errors
//
// A failed condition — 409 Conflict on a create, 412 Precondition Failed
// on an If-Match, 404 Not Found on a conditional replace or delete, or a
// stored version or receipt state the driver read and found different —
// is [driver.ErrPrecondition], classified by HTTP status from
// [azcore.ResponseError], never by message; the service's error stays in
// the chain for errors.As. In a TransactionalBatch the same statuses of
// the failing operation are read from the batch response. 413 Request
// Entity Too Large (an item over 2 MB) is [driver.ErrTooLarge]. Content or metadata that is not valid
// UTF-8 is refused before any request (JSON cannot hold it exactly).
//
// Conditional writes run with the SDK's retries switched off, so that a
// retry after a lost reply can never come back as 409 or 412 for a write
// that applied; the driver itself retries only 429 and 449, which prove
// that nothing was applied. Any other failure (a timeout, a reset
// connection, a 5xx) is returned as it is: its outcome is unknown and the
// store settles it through receipts. Context errors pass through.
//
// # Consistency
//
// Each primitive is one conditional request on one item, atomic in Cosmos
// DB. A replace or delete sends If-Match with the ETag of the state whose
// version it expects: cached from the last read or write of the item when
// the cached version is the expected one, otherwise read first. A 412 on a cached ETag makes the driver read the
// item again: if it still holds the expected version the write is retried
// with the fresh ETag, else it is [driver.ErrPrecondition]. Cached ETags
// are only hints: a stale one costs a 412 and a read, never a lost update.
//
// [Driver.Mutate] puts the completed receipt and the file change in one
// TransactionalBatch in the file's partition, which Cosmos DB applies
// atomically: a tool's read followed by an idempotent write costs one
// request. Over the primitives it costs three (reserve, replace,
// complete).
//
// Reads and single-partition queries send the session token of this
// driver's last request in that partition, so on an account with Session
// consistency a driver reads its own writes. Another process may see
// older state briefly; every decision the store makes on a read is
// confirmed by a conditional write, so that costs retries, never
// correctness.
//
// Receipts, delete tombstones and history entries carry a ttl (seconds
// until their ExpiresAt); containers that New creates have
// DefaultTimeToLive -1, which turns per-item ttl on without expiring
// anything else. On a container without it, nothing expires. A live file
// never carries a ttl: its own expiry is metadata (driver.ExpiresKey),
// which the store acts on and records as a delete in the history.
//
// The store refuses a create that would make a file and a folder share a
// name (store.ErrPathCollision) after reading the path's ancestors and
// listing below it, in requests before the create's request, not inside it:
// concurrent creates of "p/x.md" and "p/x.md/y.md" may both pass that
// check and both land. A create after the other has landed is refused.
//
// # Capabilities
//
// [driver.Mutator] (one TransactionalBatch in the file's partition; an
// operation id is recognised within that partition, see README.md),
// [driver.BatchGetter] (one query per partition), [driver.ScopeReader]
// (one single-partition query per search, content cut on the server) and
// [driver.Historian] (a change's history entry rides in Mutate's batch, at
// no extra request; a file's or a namespace's history is one
// single-partition query ordered by key; DeleteHistory removes 100
// entries per TransactionalBatch). No [driver.Pruner]: the ttl does the
// work, for history entries too.
package cosmosdb
