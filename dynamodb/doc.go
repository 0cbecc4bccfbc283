// Package dynamodb is the Amazon DynamoDB driver for agentmem: one table
// holds the files and the operation receipts, and every compare-and-swap
// is a DynamoDB condition expression.
//
//	import (
//		awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
//		"github.com/agentmem/agentmem/dynamodb"
//	)
//
//	d, err := dynamodb.New(ctx, awsdynamodb.NewFromConfig(cfg), "agent-memory", nil)
//	if err != nil { … }
//	s := store.New(d, nil)
//
// New creates the table when it is missing (on-demand capacity), waits
// until it is ACTIVE and enables time to live on [TTLAttribute]; set
// [Options.NoCreate] to manage the table yourself (a missing table is then
// an error wrapping driver.ErrStoreNotFound).
//
// # Opening
//
// [New] (ctx, *dynamodb.Client, table, *Options) uses the caller's
// configured client; a nil ctx or client or an empty table name is an
// error wrapping driver.ErrNilArgument. Importing the package registers the store URL scheme
// "dynamodb" with store.Register: store.Open(ctx, "dynamodb://TABLE", nil)
// loads the SDK's default configuration (config.LoadDefaultConfig:
// credentials and region from the environment, shared files or the
// instance role) and takes the parameters region, endpoint (an http(s)
// URL, such as DynamoDB Local's http://localhost:8000), partition_depth
// (Options.PartitionDepth) and create_table=false (Options.NoCreate).
//
// The client store.Open builds checks the CRC32 of every response that
// carries an X-Amz-Crc32 header, as the SDK does, and skips a response
// without one, where the SDK compares the body with 0 and logs "failed to
// close HTTP response body, this may affect connection reuse: response did
// not match expected checksum, 0, N". DynamoDB Local sends no such header
// on its errors (every HTTP 400; TestResponseChecksums pins it). A client
// passed to [New] is used as it is.
//
// # Layout
//
// Key schema pk (HASH) + sk (RANGE), both strings. A file's sort key is its
// path; its partition key is the first [Options.PartitionDepth] directory
// segments of the path ("kamal/main/MEMORY.md" → "kamal/"; top-level files
// → "/"). Listing or searching one scope is therefore a Query on one
// partition with begins_with on the sort key, whose cost does not grow with
// the table. A receipt is its own item, pk "#op#<id>" (hashed when too
// long), sk "#". A history entry is its own item in the history partition
// of its file's partition ("#h#kamal/"), sort key driver.HistoryKey (the
// path, a space, the version inverted so that the newest sorts first): a
// file's or a user's history is one Query, like a listing. Receipts,
// tombstones and history entries carry [TTLAttribute]. The module README
// explains the choice.
//
// A file's expiry and pin (driver.ExpiresKey, driver.PinnedKey) are kept
// in its metadata attribute like any metadata, never in [TTLAttribute]:
// the store records an expiry as a delete in the history, which a time to
// live would skip. A listing (ListFiles, ReadScope) reads each row's
// metadata attribute beside its path and reports those two keys as the
// entry's lifetime, in the same request; a listing never reads content.
//
// # Errors
//
// A failed condition is reported as driver.ErrPrecondition, classified by
// the SDK's error types (ConditionalCheckFailedException, and the reasons
// of a TransactionCanceledException), never by message. When the SDK
// retried a request (a lost reply, a dropped connection) and the condition
// then failed, the item DynamoDB returns with the failure
// (ReturnValuesOnConditionCheckFailure ALL_OLD) decides: it shows our unique
// version → success; otherwise [ErrOutcomeUnknown], never ErrPrecondition,
// since the first attempt may have applied. A row larger than DynamoDB's
// 400 KB item limit (attribute names plus values), or a path longer than
// the 1,024-byte sort-key limit, is driver.ErrTooLarge, checked before
// anything is sent. Other SDK errors, context errors included, are returned
// as they are, so errors.As finds the SDK's types.
//
// # Consistency
//
// Every read is strongly consistent (GetItem, Query, Scan and BatchGetItem
// with ConsistentRead). Every primitive is one conditional single-item
// request. The atomic mutation is one TransactWriteItems of the file change,
// the completed receipt and, with history on, the history entry; the SDK's
// client request token makes its retries idempotent. Listing a prefix that names fewer than PartitionDepth
// directories ("" or "tenant") cannot be a Query: it scans the whole table
// (consistently) and keeps the smallest paths, so its cost grows with the
// table; agents never list such prefixes, operators may.
//
// Expired receipts, tombstones and history entries are removed by
// DynamoDB's time to live, typically within a few days after
// [TTLAttribute] (Unix seconds, rounded up); until then a receipt still
// answers replays (the store hides expired history entries at once).
//
// The store refuses a create that would make a file and a folder share a
// name (store.ErrPathCollision) after reading the path's ancestors and
// listing below it, in requests before the create's request, not inside it:
// concurrent creates of "p/x.md" and "p/x.md/y.md" may both pass that
// check and both land. A create after the other has landed is refused.
//
// # Capabilities
//
// [driver.Mutator] (TransactWriteItems), [driver.BatchGetter]
// (BatchGetItem, 100 keys per request, unprocessed keys retried),
// [driver.ScopeReader] (one Query returning the files directly in a scope
// with their content, version and lifetime) and [driver.Historian] (history entries written in
// the mutation's own TransactWriteItems, so history costs no request;
// listed by Query, forgotten by BatchWriteItem, 25 per request). Not
// [driver.Pruner]: time to live does that work.
package dynamodb
