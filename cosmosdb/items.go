package cosmosdb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

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

func decodeFile(b []byte) (*driver.File, error) {
	var it fileItem
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, fmt.Errorf("cosmosdb: decoding file item: %w", err)
	}
	f := &driver.File{
		Path: it.Path, Content: it.Content, Version: it.Version,
		OperationID: it.Op, Tombstone: it.Tomb,
	}
	var err error
	if f.Metadata, err = decodeMeta(it.Meta, strconv.Quote(it.Path)); err != nil {
		return nil, err
	}
	if f.ExpiresAt, err = parseTime(it.Expires); err != nil {
		return nil, err
	}
	return f, nil
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

// expiry returns the stored form of an expiry time and the item's ttl: the
// whole seconds from now until t, rounded up, at least 1 (Cosmos DB counts
// an item's ttl from its last write).
func expiry(t, now time.Time) (string, *int32) {
	if t.IsZero() {
		return "", nil
	}
	secs := math.Ceil(t.Sub(now).Seconds())
	ttl := int32(min(max(secs, 1), math.MaxInt32))
	return formatTime(t), &ttl
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
