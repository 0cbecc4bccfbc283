package dynamodb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// DefaultCreateTimeout bounds how long New waits for a table it creates to
// become ACTIVE.
const DefaultCreateTimeout = 5 * time.Minute

// Options configures New. A nil *Options, like the zero value, means
// defaults; every field's zero value is its default.
type Options struct {
	// NoCreate stops New from creating the table and enabling its time to
	// live (default false: New creates a missing table). When the table
	// does not exist, New fails with an error wrapping
	// driver.ErrStoreNotFound. The table must have the key schema pk
	// (HASH, String) + sk (RANGE, String); enable TTL on TTLAttribute
	// yourself if receipts, tombstones and history entries should expire.
	NoCreate bool
	// PartitionDepth is how many leading directory segments of a path form
	// its partition key (0 means the default, 1: "kamal/main/MEMORY.md"
	// lives in partition "kamal/"). Listing a prefix that names at least
	// this many directories is one Query; shorter prefixes fall back to a
	// Scan. Raise it when one top-level segment holds many tenants
	// ("org/user/…" → 2). It is part of the table's layout: use the same
	// value for the table's whole life.
	PartitionDepth int
	// CreateTimeout bounds the wait for a created table to become ACTIVE
	// (0 means the default, DefaultCreateTimeout).
	CreateTimeout time.Duration
}

// Driver stores agentmem files, receipts and history entries in one
// DynamoDB table. It is safe for concurrent use. Create it with New.
type Driver struct {
	c     *awsdynamodb.Client
	table string
	l     layout
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Mutator     = (*Driver)(nil)
	_ driver.BatchGetter = (*Driver)(nil)
	_ driver.ScopeReader = (*Driver)(nil)
	_ driver.Historian   = (*Driver)(nil)
	_ driver.Namer       = (*Driver)(nil)
)

// Name implements driver.Namer: "dynamodb", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "dynamodb" }

// New returns a driver over table, using the caller's configured client;
// nil opts means defaults. Unless opts.NoCreate is set it creates the
// table when missing (on-demand capacity, PAY_PER_REQUEST), waits until it
// is ACTIVE and enables time to live on TTLAttribute; with NoCreate a
// missing table is an error wrapping driver.ErrStoreNotFound. It fails
// when the table's key schema is not pk (HASH, S) + sk (RANGE, S). A nil
// ctx, a nil client or an empty table name is an error wrapping
// driver.ErrNilArgument.
func New(ctx context.Context, client *awsdynamodb.Client, table string, opts *Options) (*Driver, error) {
	switch {
	case ctx == nil:
		return nil, errorf("pass a context to New, not nil: %w", driver.ErrNilArgument)
	case client == nil:
		return nil, errorf("pass a DynamoDB client to New, not nil: %w", driver.ErrNilArgument)
	case table == "":
		return nil, errorf("pass a table name to New, not an empty one: %w", driver.ErrNilArgument)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.PartitionDepth <= 0 {
		o.PartitionDepth = 1
	}
	if o.CreateTimeout <= 0 {
		o.CreateTimeout = DefaultCreateTimeout
	}
	d := &Driver{c: client, table: table, l: layout{depth: o.PartitionDepth}}
	desc, err := d.describe(ctx)
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing) && o.NoCreate:
		return nil, errorf("create table %q first, or open it without create=false, which creates it: %w: %w", table, driver.ErrStoreNotFound, err)
	case errors.As(err, &missing):
		if desc, err = d.create(ctx, o.CreateTimeout); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, errorf("describe table %q: %w", table, err)
	}
	if err := checkKeySchema(desc); err != nil {
		return nil, errorf("table %q: %w", table, err)
	}
	if desc.TableStatus != types.TableStatusActive {
		if desc, err = d.waitActive(ctx, o.CreateTimeout); err != nil {
			return nil, err
		}
	}
	if !o.NoCreate {
		if err := d.enableTTL(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Table returns the table name.
func (d *Driver) Table() string { return d.table }

// Client returns the client the driver uses.
func (d *Driver) Client() *awsdynamodb.Client { return d.c }

// Close implements driver.Driver. The client belongs to the caller; Close
// releases nothing.
func (d *Driver) Close() error { return nil }

// Attribute names. The key schema is pk (HASH, S) + sk (RANGE, S); see
// README.md for the layout and why.
const (
	attrPK = "pk"
	attrSK = "sk"

	// Files.
	attrVersion   = "v"
	attrContent   = "c"
	attrOperation = "op"
	attrMetadata  = "md"   // canonical JSON of the metadata map
	attrDir       = "dir"  // the directory holding the file ("t/main/")
	attrTombstone = "tomb" // BOOL true on tombstones only

	// Receipts.
	attrID       = "id"
	attrFP       = "fp"
	attrKind     = "kind"
	attrPath     = "path"
	attrExpected = "expected"
	attrExisted  = "existed"
	attrDone     = "done"
	attrCreated  = "created" // Unix nanoseconds

	// History entries (also attrPath, attrKind, attrVersion, attrOperation,
	// attrMetadata, attrContent, attrCreated for the entry's Time).
	attrPrevious = "prev"
	attrPending  = "pend" // BOOL true on pending entries only

	// TTLAttribute is the Number attribute (Unix epoch seconds) that
	// receipts, tombstones and history entries carry and that the table's
	// time to live deletes by. Files never carry it, not even a file that
	// expires: its expiry is metadata (driver.ExpiresKey), which the store
	// records as a delete in the history when it is due.
	TTLAttribute = "expires_at"
)

const (
	// maxItemBytes is DynamoDB's item size limit (400 KB): attribute names
	// plus values, strings in UTF-8 bytes.
	maxItemBytes = 400 * 1024
	// maxSortKeyBytes and maxPartitionKeyBytes are DynamoDB's key limits.
	maxSortKeyBytes      = 1024
	maxPartitionKeyBytes = 2048
	// numberBytes is a generous size of any Number attribute we write
	// (DynamoDB uses at most 21 bytes).
	numberBytes = 21

	// rootPartition holds the files at the top level (paths without "/").
	// No path starts with "/", so it never collides with a directory.
	rootPartition = "/"
	// receiptPrefix and hashedReceiptPrefix start the partition key of a
	// receipt; "#" is not a path character, so no file partition starts
	// with it.
	receiptPrefix       = "#op#"
	hashedReceiptPrefix = "#oph#"
	// receiptSortKey is every receipt's sort key. It never starts with a
	// path character, so no listing prefix matches it.
	receiptSortKey = "#"
	// historyPrefix starts the partition key of history entries: the
	// entries of the files in partition P live in partition historyPrefix+P,
	// sorted by driver.HistoryKey. "#h#" starts neither a path nor a
	// receipt's partition.
	historyPrefix = "#h#"
)

// layout maps paths and receipt ids to keys.
type layout struct {
	// depth is the number of leading directory segments in a file's
	// partition key (Options.PartitionDepth).
	depth int
}

// dirOf returns the directory of path including its trailing "/", or ""
// for a top-level file.
func dirOf(path string) string {
	return path[:strings.LastIndexByte(path, '/')+1]
}

// dirPartition returns the partition key of the files directly in dir:
// the first depth segments of dir (all of them when it has fewer), or the
// root partition for "".
func (l layout) dirPartition(dir string) string {
	if i := nthSlash(dir, l.depth); i >= 0 {
		dir = dir[:i+1]
	}
	if dir == "" {
		return rootPartition
	}
	return dir
}

// prefixPartition returns the one partition that holds every path starting
// with prefix, or false when such paths may lie in several partitions (the
// prefix names fewer than depth whole directories).
func (l layout) prefixPartition(prefix string) (string, bool) {
	i := nthSlash(prefix, l.depth)
	if i < 0 {
		return "", false
	}
	return prefix[:i+1], true
}

// nthSlash returns the index of the n-th "/" in s (n >= 1), or -1.
func nthSlash(s string, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := strings.IndexByte(s[off:], '/')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off - 1
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func boolean(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

// fileKey returns the key of the row at path. The store never passes a
// path whose key DynamoDB would refuse; keyFits says whether it fits.
func (l layout) fileKey(path string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(l.dirPartition(dirOf(path))), attrSK: str(path)}
}

// keyFits reports whether path can be a sort key (at most 1,024 bytes; the
// store bounds segments, not whole paths).
func keyFits(path string) bool { return len(path) <= maxSortKeyBytes }

// historyPartition returns the partition key of the history entries of
// path: historyPrefix and the partition of the file.
func (l layout) historyPartition(path string) string {
	return historyPrefix + l.dirPartition(dirOf(path))
}

// historyPrefixPartition returns the one partition that holds every
// history entry whose key starts with prefix, or false when such entries
// may lie in several partitions. A prefix holding the space of
// driver.HistoryKey names one file; otherwise it is a path prefix, placed
// as for a listing.
func (l layout) historyPrefixPartition(prefix string) (string, bool) {
	if i := strings.IndexByte(prefix, ' '); i >= 0 {
		return l.historyPartition(prefix[:i]), true
	}
	pk, ok := l.prefixPartition(prefix)
	if !ok {
		return "", false
	}
	return historyPrefix + pk, true
}

// historyKey returns the key of the entry of path at version; sort key
// driver.HistoryKey, which may be too long for DynamoDB (historyKeyFits).
func (l layout) historyKey(path, version string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(l.historyPartition(path)), attrSK: str(driver.HistoryKey(path, version))}
}

// historyKeyFits reports whether the entries of path fit DynamoDB's sort
// key limit: driver.HistoryKey is the path, a space and 26 bytes.
func historyKeyFits(path string) bool { return len(path)+1+26 <= maxSortKeyBytes }

// receiptKey returns the key of receipt id. Ids too long for a partition
// key are hashed under another prefix, so the two forms never collide.
func receiptKey(id string) map[string]types.AttributeValue {
	pk := receiptPrefix + id
	if len(pk) > maxPartitionKeyBytes {
		sum := sha256.Sum256([]byte(id))
		pk = hashedReceiptPrefix + hex.EncodeToString(sum[:])
	}
	return map[string]types.AttributeValue{attrPK: str(pk), attrSK: str(receiptSortKey)}
}

// fileItem encodes a file row. Empty strings are left out.
func (l layout) fileItem(f driver.File) map[string]types.AttributeValue {
	it := l.fileKey(f.Path)
	it[attrVersion] = str(f.Version)
	if f.Content != "" {
		it[attrContent] = str(f.Content)
	}
	if f.OperationID != "" {
		it[attrOperation] = str(f.OperationID)
	}
	if len(f.Metadata) > 0 {
		b, _ := json.Marshal(f.Metadata) // a map[string]string always encodes
		it[attrMetadata] = str(string(b))
	}
	if d := dirOf(f.Path); d != "" {
		it[attrDir] = str(d)
	}
	if f.Tombstone {
		it[attrTombstone] = boolean(true)
	}
	if !f.ExpiresAt.IsZero() {
		it[TTLAttribute] = num(ttlSeconds(f.ExpiresAt))
	}
	return it
}

// receiptItem encodes a receipt.
func receiptItem(r driver.Receipt) map[string]types.AttributeValue {
	it := receiptKey(r.ID)
	it[attrID] = str(r.ID)
	it[attrFP] = str(r.Fingerprint)
	it[attrKind] = str(string(r.Kind))
	it[attrPath] = str(r.Path)
	if r.Expected != "" {
		it[attrExpected] = str(r.Expected)
	}
	it[attrVersion] = str(r.Version)
	it[attrExisted] = boolean(r.Existed)
	it[attrDone] = boolean(r.Completed)
	it[attrCreated] = num(r.CreatedAt.UnixNano())
	if !r.ExpiresAt.IsZero() {
		it[TTLAttribute] = num(ttlSeconds(r.ExpiresAt))
	}
	return it
}

// historyItem encodes a history entry. Empty strings are left out.
func (l layout) historyItem(e driver.HistoryEntry) map[string]types.AttributeValue {
	it := l.historyKey(e.Path, e.Version)
	it[attrPath] = str(e.Path)
	it[attrVersion] = str(e.Version)
	it[attrKind] = str(string(e.Kind))
	if e.Previous != "" {
		it[attrPrevious] = str(e.Previous)
	}
	if e.OperationID != "" {
		it[attrOperation] = str(e.OperationID)
	}
	if len(e.Metadata) > 0 {
		b, _ := json.Marshal(e.Metadata) // a map[string]string always encodes
		it[attrMetadata] = str(string(b))
	}
	if e.Content != "" {
		it[attrContent] = str(e.Content)
	}
	if !e.Time.IsZero() {
		it[attrCreated] = num(e.Time.UnixNano())
	}
	if !e.ExpiresAt.IsZero() {
		it[TTLAttribute] = num(ttlSeconds(e.ExpiresAt))
	}
	if e.Pending {
		it[attrPending] = boolean(true)
	}
	return it
}

// itemSize returns an upper bound of the size DynamoDB counts for it:
// attribute names plus values (strings in bytes, numbers at most 21 bytes,
// booleans 1 byte).
func itemSize(it map[string]types.AttributeValue) int {
	n := 0
	for k, v := range it {
		n += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += numberBytes
		default:
			n++
		}
	}
	return n
}

func getS(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getBool(it map[string]types.AttributeValue, name string) bool {
	v, ok := it[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func getInt(it map[string]types.AttributeValue, name string) (int64, bool) {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

func getTTL(it map[string]types.AttributeValue) time.Time {
	if s, ok := getInt(it, TTLAttribute); ok {
		return time.Unix(s, 0)
	}
	return time.Time{}
}

// decodeFile decodes a file row; nil for an empty item.
func decodeFile(it map[string]types.AttributeValue) (*driver.File, error) {
	if len(it) == 0 {
		return nil, nil
	}
	f := &driver.File{
		Path:        getS(it, attrSK),
		Content:     getS(it, attrContent),
		Version:     getS(it, attrVersion),
		OperationID: getS(it, attrOperation),
		Tombstone:   getBool(it, attrTombstone),
		ExpiresAt:   getTTL(it),
	}
	if md := getS(it, attrMetadata); md != "" {
		if err := json.Unmarshal([]byte(md), &f.Metadata); err != nil {
			return nil, errorf("metadata of %q: %w", f.Path, err)
		}
	}
	return f, nil
}

// decodeEntry decodes a listed file row (see listProjection).
func decodeEntry(it map[string]types.AttributeValue) (driver.Entry, error) {
	e := driver.Entry{Path: getS(it, attrSK), Tombstone: getBool(it, attrTombstone)}
	lt, err := lifetimeOf(e.Path, it)
	e.Lifetime = lt
	return e, err
}

// lifetimeOf returns the lifetime held in the metadata of the file row at
// path: the values of driver.ExpiresKey and driver.PinnedKey in its JSON
// string attrMetadata. Metadata that names no store-owned key (as
// json.Marshal writes it, keys unescaped) is not decoded.
func lifetimeOf(path string, it map[string]types.AttributeValue) (driver.Lifetime, error) {
	l, err := driver.LifetimeOfJSON(getS(it, attrMetadata)) // without decoding the whole text
	if err != nil {
		return driver.Lifetime{}, errorf("metadata of %q: %w", path, err)
	}
	return l, nil
}

// decodeReceipt decodes a receipt; nil for an empty item.
func decodeReceipt(it map[string]types.AttributeValue) *driver.Receipt {
	if len(it) == 0 {
		return nil
	}
	r := &driver.Receipt{
		ID:          getS(it, attrID),
		Fingerprint: getS(it, attrFP),
		Kind:        driver.Kind(getS(it, attrKind)),
		Path:        getS(it, attrPath),
		Expected:    getS(it, attrExpected),
		Version:     getS(it, attrVersion),
		Existed:     getBool(it, attrExisted),
		Completed:   getBool(it, attrDone),
		ExpiresAt:   getTTL(it),
	}
	if ns, ok := getInt(it, attrCreated); ok {
		r.CreatedAt = time.Unix(0, ns)
	}
	return r
}

// decodeHistory decodes a history entry; nil for an empty item.
func decodeHistory(it map[string]types.AttributeValue) (*driver.HistoryEntry, error) {
	if len(it) == 0 {
		return nil, nil
	}
	e := &driver.HistoryEntry{
		Path:        getS(it, attrPath),
		Version:     getS(it, attrVersion),
		Previous:    getS(it, attrPrevious),
		Kind:        driver.Kind(getS(it, attrKind)),
		OperationID: getS(it, attrOperation),
		Content:     getS(it, attrContent),
		ExpiresAt:   getTTL(it),
		Pending:     getBool(it, attrPending),
	}
	if ns, ok := getInt(it, attrCreated); ok {
		e.Time = time.Unix(0, ns)
	}
	if md := getS(it, attrMetadata); md != "" {
		if err := json.Unmarshal([]byte(md), &e.Metadata); err != nil {
			return nil, errorf("metadata of the history of %q: %w", e.Path, err)
		}
	}
	return e, nil
}
