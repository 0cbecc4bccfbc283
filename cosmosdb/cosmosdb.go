package cosmosdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// PartitionKeyPath is the partition key path of the container the driver
// uses. A container created elsewhere must have it.
const PartitionKeyPath = "/pk"

// Options configures a Driver. nil, and the zero value of each field,
// mean the documented defaults.
type Options struct {
	// NoCreate makes New leave a missing database or container alone and
	// fail with an error wrapping driver.ErrStoreNotFound. false (the
	// default): New creates them when they are absent.
	NoCreate bool
	// Throughput, when set, is the provisioned throughput of a container
	// that New creates (nil: the account's default, e.g. serverless).
	Throughput *azcosmos.ThroughputProperties
	// CacheSize is how many entries each of the driver's caches holds:
	// the ETags of the files, receipts and history entries last read or
	// written, and the partitions of receipts, which let a replace or
	// delete be one If-Match request. 0 means the default size
	// (DefaultCacheSize, 1,024); a negative value turns the cache off, so
	// that every replace or delete reads the item first. The session
	// tokens that give a driver its own writes are kept either way (at
	// most CacheSize partitions, or DefaultCacheSize).
	CacheSize int
}

// Driver is the Cosmos DB driver. It is safe for concurrent use. It does
// not own the client: Close leaves it open.
type Driver struct {
	c        *azcosmos.ContainerClient
	files    cache[string, state] // path → last seen (version, ETag)
	receipts cache[string, state] // operation id → last seen (version, completed, ETag)
	history  cache[string, state] // history key → last seen (version, complete, expiry, ETag)
	// receiptParts maps an operation id to the partition of the receipt
	// Mutate wrote or GetReceipt found there (the file's partition).
	receiptParts cache[string, string]
	sessions     *driver.Hints[string, string] // partition key → last session token
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Mutator     = (*Driver)(nil)
	_ driver.BatchGetter = (*Driver)(nil)
	_ driver.ScopeReader = (*Driver)(nil)
	_ driver.Historian   = (*Driver)(nil)
	_ driver.Namer       = (*Driver)(nil)
)

// Name implements driver.Namer: "cosmosdb", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "cosmosdb" }

// New returns a driver over container in database, reached through
// client. Unless opts.NoCreate is set it creates the database and the
// container (ContainerProperties: partition key PartitionKeyPath, per-item
// TTL enabled, only the queried fields indexed) when they are absent; with
// it, a missing one is an error wrapping driver.ErrStoreNotFound. An
// existing container must be partitioned on PartitionKeyPath. A nil ctx or
// client, or an empty database or container name, is an error wrapping
// driver.ErrNilArgument.
func New(ctx context.Context, client *azcosmos.Client, database, container string, opts *Options) (*Driver, error) {
	switch {
	case ctx == nil:
		return nil, fmt.Errorf("cosmosdb: pass a context to New, not nil: %w", driver.ErrNilArgument)
	case client == nil:
		return nil, fmt.Errorf("cosmosdb: pass a Cosmos DB client to New, not nil: %w", driver.ErrNilArgument)
	case database == "":
		return nil, fmt.Errorf("cosmosdb: pass a database name to New, not \"\": %w", driver.ErrNilArgument)
	case container == "":
		return nil, fmt.Errorf("cosmosdb: pass a container name to New, not \"\": %w", driver.ErrNilArgument)
	}
	if opts == nil {
		opts = &Options{}
	}
	c, err := client.NewContainer(database, container)
	if err != nil {
		return nil, fmt.Errorf("cosmosdb: %w", err)
	}
	props, err := c.Read(ctx, nil)
	if statusOf(err) == 404 {
		if opts.NoCreate {
			return nil, fmt.Errorf("cosmosdb: create container %q in database %q first, or open it without create=false, which creates it: %w: %w", container, database, driver.ErrStoreNotFound, err)
		}
		if err = create(ctx, client, database, container, opts.Throughput); err == nil {
			props, err = c.Read(ctx, nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cosmosdb: container %q in database %q: %w", container, database, err)
	}
	if p := props.ContainerProperties; p == nil || len(p.PartitionKeyDefinition.Paths) != 1 || p.PartitionKeyDefinition.Paths[0] != PartitionKeyPath {
		return nil, fmt.Errorf("cosmosdb: container %q must be partitioned on %s", container, PartitionKeyPath)
	}
	sessions := opts.CacheSize
	if sessions <= 0 {
		sessions = DefaultCacheSize
	}
	return &Driver{
		c:            c,
		files:        newCache[string, state](opts.CacheSize),
		receipts:     newCache[string, state](opts.CacheSize),
		history:      newCache[string, state](opts.CacheSize),
		receiptParts: newCache[string, string](opts.CacheSize),
		sessions:     driver.NewHints[string, string](sessions),
	}, nil
}

// Close implements driver.Driver. The client stays open; it belongs to
// the caller.
func (d *Driver) Close() error { return nil }

// Container returns the container client the driver uses.
func (d *Driver) Container() *azcosmos.ContainerClient { return d.c }

// DefaultCacheSize is the default number of entries in each of the
// driver's small caches (see Options.CacheSize).
const DefaultCacheSize = 1024

// state is what the driver last saw of an item: the store's version (for
// receipts whether it was completed, for history entries whether the entry
// was complete and when it expires) together with the ETag of that exact
// state. A request sent with If-Match on the ETag applies only if
// the item is still in that state, so a stale entry can only cause a 412,
// after which the driver reads the item again.
type state struct {
	version   string
	completed bool
	expires   time.Time
	etag      azcore.ETag
}

// cache is one of the driver's caches of hints (Options.CacheSize); the
// zero value is off: it remembers nothing.
type cache[K comparable, V any] struct{ h *driver.Hints[K, V] }

// newCache returns a cache of n entries: DefaultCacheSize when n is 0,
// off when n is negative.
func newCache[K comparable, V any](n int) cache[K, V] {
	switch {
	case n < 0:
		return cache[K, V]{}
	case n == 0:
		n = DefaultCacheSize
	}
	return cache[K, V]{driver.NewHints[K, V](n)}
}

// Get returns the hint for k, if there is one.
func (c cache[K, V]) Get(k K) (V, bool) {
	if c.h == nil {
		var zero V
		return zero, false
	}
	return c.h.Get(k)
}

// Put remembers v for k.
func (c cache[K, V]) Put(k K, v V) {
	if c.h != nil {
		c.h.Put(k, v)
	}
}

// Drop forgets the hint for k.
func (c cache[K, V]) Drop(k K) {
	if c.h != nil {
		c.h.Drop(k)
	}
}

// Item types, stored in the "type" field so that queries over files never
// see receipts.
const (
	typeFile    = "file"
	typeReceipt = "receipt"
	typeHistory = "history"
)

// rootPartition is the partition key of files at the top level (paths
// without "/"). No path segment can be "/", so it never collides with a
// first segment.
const rootPartition = "/"

// maxPlainID is the longest item id kept readable; longer ids are hashed.
// Cosmos DB accepts ids up to 1,023 bytes; 255 leaves room for older limits.
const maxPlainID = 255

// fileID returns the item id of path. Store paths hold only
// [A-Za-z0-9_.-/], and Cosmos ids may not hold "/", so "/" becomes "~"
// (which no path holds) behind an "f" marker: reversible, and never "." or
// "..". An id longer than maxPlainID is "h" + the SHA-256 of the path; the
// path itself is always kept in the item.
func fileID(path string) string {
	if id := "f" + strings.ReplaceAll(path, "/", "~"); len(id) <= maxPlainID {
		return id
	}
	sum := sha256.Sum256([]byte(path))
	return "h" + hex.EncodeToString(sum[:])
}

// receiptID returns the item id of an operation id. Operation ids are
// arbitrary text of up to 512 characters, so they are hashed; the id itself
// is kept in the item and checked on every read.
func receiptID(op string) string {
	sum := sha256.Sum256([]byte(op))
	return "r" + hex.EncodeToString(sum[:])
}

// partitionOf returns the partition key of path: its first segment, or
// rootPartition for a top-level file. Every file under "tenant/" shares one
// logical partition, so listing or searching any scope below it is a
// single-partition query.
func partitionOf(path string) string {
	if first, _, ok := strings.Cut(path, "/"); ok {
		return first
	}
	return rootPartition
}

// prefixPartition returns the one partition that holds every path starting
// with prefix, or false when such paths may lie in several partitions (a
// prefix without "/": "" or a part of a first segment).
func prefixPartition(prefix string) (string, bool) {
	first, _, ok := strings.Cut(prefix, "/")
	return first, ok
}

// dirOf returns the scope a path lies directly in: everything up to and
// including its last "/", or "" at the top level.
func dirOf(path string) string {
	return path[:strings.LastIndex(path, "/")+1]
}

// scopePartition returns the partition of the files directly under a
// scope prefix ("" or ending in "/").
func scopePartition(prefix string) string {
	if prefix == "" {
		return rootPartition
	}
	return partitionOf(prefix)
}

// fileItem is a file row as stored.
type fileItem struct {
	ID      string `json:"id"`
	PK      string `json:"pk"`
	Type    string `json:"type"`
	Path    string `json:"path"`
	Dir     string `json:"dir"`
	Content string `json:"content"`
	Version string `json:"version"`
	Op      string `json:"op,omitempty"`
	// Meta is the metadata as a JSON object in a string: user keys never
	// become item properties.
	Meta    string `json:"meta,omitempty"`
	Tomb    bool   `json:"tomb"`
	Expires string `json:"expires,omitempty"`
	// TTL is Cosmos DB's per-item time to live, in seconds.
	TTL *int32 `json:"ttl,omitempty"`
}

// receiptItem is an operation receipt as stored: in its own partition
// (the primitive path), or in the partition of the file it changed (the
// atomic path, Driver.Mutate).
type receiptItem struct {
	ID          string `json:"id"`
	PK          string `json:"pk"`
	Type        string `json:"type"`
	Op          string `json:"op"`
	Fingerprint string `json:"fp"`
	Kind        string `json:"kind"`
	Path        string `json:"path"`
	Expected    string `json:"expected"`
	Version     string `json:"version"`
	Existed     bool   `json:"existed"`
	Completed   bool   `json:"completed"`
	Created     string `json:"created"`
	Expires     string `json:"expires,omitempty"`
	TTL         *int32 `json:"ttl,omitempty"`
}

// errNotUTF8 reports text that JSON, and so Cosmos DB, cannot hold exactly.
var errNotUTF8 = fmt.Errorf("cosmosdb: content or metadata is not valid UTF-8; nothing was written")

func encodeFile(f driver.File, now time.Time) ([]byte, error) {
	if !utf8.ValidString(f.Content) {
		return nil, errNotUTF8
	}
	it := fileItem{
		ID: fileID(f.Path), PK: partitionOf(f.Path), Type: typeFile,
		Path: f.Path, Dir: dirOf(f.Path), Content: f.Content, Version: f.Version,
		Op: f.OperationID, Tomb: f.Tombstone,
	}
	var err error
	if it.Meta, err = encodeMeta(f.Metadata); err != nil {
		return nil, err
	}
	it.Expires, it.TTL = expiry(f.ExpiresAt, now)
	return json.Marshal(it)
}

// encodeMeta returns metadata as a JSON object in a string, "" for none.
func encodeMeta(m map[string]string) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return "", errNotUTF8
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeMeta reverses encodeMeta; what names the item in errors.
func decodeMeta(s, what string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("cosmosdb: decoding metadata of %s: %w", what, err)
	}
	return m, nil
}

// lifetimeOf returns the lifetime (driver.ExpiresKey, driver.PinnedKey)
// held in meta, a row's metadata as encodeMeta stores it; what names the
// row in errors. Listings and scope reads select meta for it, in the same
// query as the path.
func lifetimeOf(meta, what string) (driver.Lifetime, error) {
	l, err := driver.LifetimeOfJSON(meta) // without decoding the whole text
	if err != nil {
		return driver.Lifetime{}, fmt.Errorf("cosmosdb: decoding metadata of %s: %w", what, err)
	}
	return l, nil
}

func decodeFile(b []byte) (*driver.File, error) {
	f, _, err := decodeFileItem(b)
	return f, err
}

// decodeFileItem decodes a file item and returns its type too (a point
// read by id may meet another type's item).
func decodeFileItem(b []byte) (*driver.File, string, error) {
	var it fileItem
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, "", fmt.Errorf("cosmosdb: decoding file item: %w", err)
	}
	f := &driver.File{
		Path: it.Path, Content: it.Content, Version: it.Version,
		OperationID: it.Op, Tombstone: it.Tomb,
	}
	var err error
	if f.Metadata, err = decodeMeta(it.Meta, strconv.Quote(it.Path)); err != nil {
		return nil, "", err
	}
	if f.ExpiresAt, err = parseTime(it.Expires); err != nil {
		return nil, "", err
	}
	return f, it.Type, nil
}

// encodeReceipt encodes r as an item in partition pk: its own partition
// (receiptID) on the primitive path, the file's partition when Mutate
// writes it in one batch with the file.
func encodeReceipt(r driver.Receipt, pk string, now time.Time) ([]byte, error) {
	id := receiptID(r.ID)
	it := receiptItem{
		ID: id, PK: pk, Type: typeReceipt, Op: r.ID, Fingerprint: r.Fingerprint,
		Kind: string(r.Kind), Path: r.Path, Expected: r.Expected, Version: r.Version,
		Existed: r.Existed, Completed: r.Completed, Created: formatTime(r.CreatedAt),
	}
	it.Expires, it.TTL = expiry(r.ExpiresAt, now)
	return json.Marshal(it)
}

func decodeReceipt(b []byte, op string) (*driver.Receipt, error) {
	var it receiptItem
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, fmt.Errorf("cosmosdb: decoding receipt item: %w", err)
	}
	if it.Op != op {
		return nil, fmt.Errorf("cosmosdb: receipt item %s holds operation %q, not %q", it.ID, it.Op, op)
	}
	r := &driver.Receipt{
		ID: it.Op, Fingerprint: it.Fingerprint, Kind: driver.Kind(it.Kind), Path: it.Path,
		Expected: it.Expected, Version: it.Version, Existed: it.Existed, Completed: it.Completed,
	}
	var err error
	if r.CreatedAt, err = parseTime(it.Created); err != nil {
		return nil, err
	}
	if r.ExpiresAt, err = parseTime(it.Expires); err != nil {
		return nil, err
	}
	return r, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("cosmosdb: bad time %q in item: %w", s, err)
	}
	return t, nil
}

// query runs sql and returns up to max rows (max <= 0: all). With a
// partition key it is a single-partition query; without one it fans out
// over every partition.
func (d *Driver) query(ctx context.Context, pk *string, sql string, params []azcosmos.QueryParameter, max int) ([][]byte, error) {
	key := azcosmos.NewPartitionKey() // cross-partition
	o := &azcosmos.QueryOptions{QueryParameters: params}
	if pk != nil {
		key = azcosmos.NewPartitionKeyString(*pk)
		o.SessionToken = d.session(*pk)
	}
	if max > 0 {
		o.PageSizeHint = int32(min(max, 1000))
	}
	var rows [][]byte
	pager := d.c.NewQueryItemsPager(sql, key, o)
	for pager.More() && (max <= 0 || len(rows) < max) {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		rows = append(rows, page.Items...)
	}
	if max > 0 && len(rows) > max {
		rows = rows[:max]
	}
	return rows, nil
}

func decodeRow[T any](b []byte) (T, error) {
	var r T
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("cosmosdb: decoding query row: %w", err)
	}
	return r, nil
}

func param(name string, v any) azcosmos.QueryParameter {
	return azcosmos.QueryParameter{Name: name, Value: v}
}

// maxThrottled bounds the attempts of one write that the service throttles.
const maxThrottled = 8

// send runs one write request. SDK retries are switched off for it: a
// write retried after a lost reply would come back as 409 or 412 although
// the first attempt applied, and the driver must never report a
// precondition failure for a write that may have landed. Only answers that
// prove nothing was applied, 429 (throttled) and 449 (retry with), are
// retried here, after the delay the service asks for.
func (d *Driver) send(ctx context.Context, fn func(context.Context) error) error {
	wctx := policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
	for attempt := 1; ; attempt++ {
		err := fn(wctx)
		wait, again := throttled(err, attempt)
		if !again || attempt >= maxThrottled {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// throttled reports whether err is an answer that proves the request was
// not applied and asks for a retry, and how long to wait.
func throttled(err error, attempt int) (time.Duration, bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || (re.StatusCode != 429 && re.StatusCode != 449) {
		return 0, false
	}
	wait := time.Duration(attempt) * 50 * time.Millisecond
	if re.RawResponse != nil {
		if ms, perr := strconv.Atoi(re.RawResponse.Header.Get("x-ms-retry-after-ms")); perr == nil && ms >= 0 {
			wait = time.Duration(ms) * time.Millisecond
		}
	}
	return min(wait, 5*time.Second), true
}

// session returns the session token last seen for partition pk: with
// Session consistency it makes a read see this driver's own writes.
func (d *Driver) session(pk string) *string {
	if t, ok := d.sessions.Get(pk); ok {
		return &t
	}
	return nil
}

func (d *Driver) remember(pk string, tok *string) {
	if tok != nil && *tok != "" {
		d.sessions.Put(pk, *tok)
	}
}

// etagOf returns the ETag of a read: the response header, or the item's
// _etag property when a server leaves the header out.
func etagOf(resp azcosmos.ItemResponse) azcore.ETag {
	if resp.ETag != "" {
		return resp.ETag
	}
	var sys struct {
		ETag string `json:"_etag"`
	}
	_ = json.Unmarshal(resp.Value, &sys)
	return azcore.ETag(sys.ETag)
}

func key(pk string) azcosmos.PartitionKey { return azcosmos.NewPartitionKeyString(pk) }
