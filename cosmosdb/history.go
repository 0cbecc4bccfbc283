package cosmosdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// historyBatch bounds the entries DeleteHistory removes per round: one
// query and one TransactionalBatch per partition (Cosmos DB's limit is
// 100 operations per batch).
const historyBatch = 100

// errEntryComplete reports a DropHistory of an entry that is complete.
var errEntryComplete = fmt.Errorf("cosmosdb: history entry is complete: %w", driver.ErrPrecondition)

// historyID returns the item id of the history entry with key k
// (driver.HistoryKey): "v" + the key with "/" and the space written as
// "~". Paths never hold "~" and the key's version part is Crockford
// base32, so the last "~" ends the path: reversible. A key whose version
// part holds anything else, or whose id would be longer than maxPlainID,
// gets "w" + the SHA-256 of the key; the key itself is always kept in the
// item.
func historyID(k string) string {
	path, stem, _ := strings.Cut(k, " ")
	plain := !strings.ContainsFunc(stem, func(r rune) bool { return !('0' <= r && r <= '9' || 'A' <= r && r <= 'Z') })
	if id := "v" + strings.ReplaceAll(path, "/", "~") + "~" + stem; plain && len(id) <= maxPlainID {
		return id
	}
	sum := sha256.Sum256([]byte(k))
	return "w" + hex.EncodeToString(sum[:])
}

// historyPartition returns the one partition that holds every entry whose
// key starts with prefix: a prefix holding "/" lies in its first
// segment's; a top-level file's entries ("a.md ", path and space) lie in
// rootPartition. Other prefixes ("" or part of a first segment) may span
// partitions.
func historyPartition(prefix string) (string, bool) {
	if pk, ok := prefixPartition(prefix); ok {
		return pk, true
	}
	if strings.Contains(prefix, " ") {
		return rootPartition, true
	}
	return "", false
}

// historyItem is a history entry as stored, in the partition of its file
// (so that Mutate writes it in the file's TransactionalBatch).
type historyItem struct {
	ID   string `json:"id"`
	PK   string `json:"pk"`
	Type string `json:"type"`
	// Path is the entry's key (driver.HistoryKey: the file's path, a space
	// and the inverted version), not the file's path: the index on path
	// that lists files lists history in key order, with no index of its
	// own.
	Path string `json:"path"`
	// File is the path of the file changed.
	File     string `json:"file"`
	Version  string `json:"version"`
	Previous string `json:"prev,omitempty"`
	Kind     string `json:"kind"`
	Op       string `json:"op,omitempty"`
	// Meta is the metadata as a JSON object in a string, as for files.
	Meta    string `json:"meta,omitempty"`
	Content string `json:"content"`
	Time    string `json:"time"`
	Expires string `json:"expires,omitempty"`
	TTL     *int32 `json:"ttl,omitempty"`
	Pending bool   `json:"pending"`
}

func encodeHistory(e driver.HistoryEntry, now time.Time) ([]byte, error) {
	if !utf8.ValidString(e.Content) {
		return nil, errNotUTF8
	}
	k := e.Key()
	it := historyItem{
		ID: historyID(k), PK: partitionOf(e.Path), Type: typeHistory, Path: k, File: e.Path,
		Version: e.Version, Previous: e.Previous, Kind: string(e.Kind), Op: e.OperationID,
		Content: e.Content, Time: formatTime(e.Time), Pending: e.Pending,
	}
	var err error
	if it.Meta, err = encodeMeta(e.Metadata); err != nil {
		return nil, err
	}
	it.Expires, it.TTL = expiry(e.ExpiresAt, now)
	return json.Marshal(it)
}

func decodeHistory(b []byte) (*driver.HistoryEntry, error) {
	var it historyItem
	if err := json.Unmarshal(b, &it); err != nil {
		return nil, fmt.Errorf("cosmosdb: decoding history item: %w", err)
	}
	e := &driver.HistoryEntry{
		Path: it.File, Version: it.Version, Previous: it.Previous, Kind: driver.Kind(it.Kind),
		OperationID: it.Op, Content: it.Content, Pending: it.Pending,
	}
	if e.Key() != it.Path {
		return nil, fmt.Errorf("cosmosdb: history item %s holds key %q for %q at %q", it.ID, it.Path, it.File, it.Version)
	}
	var err error
	if e.Metadata, err = decodeMeta(it.Meta, "the history of "+strconv.Quote(it.File)); err != nil {
		return nil, err
	}
	if e.Time, err = parseTime(it.Time); err != nil {
		return nil, err
	}
	if e.ExpiresAt, err = parseTime(it.Expires); err != nil {
		return nil, err
	}
	return e, nil
}

// historyState is the cache entry of a history entry.
func historyState(e *driver.HistoryEntry, etag azcore.ETag) state {
	return state{version: e.Version, completed: !e.Pending, expires: e.ExpiresAt, etag: etag}
}

// PutHistory implements driver.Historian with one CreateItem in the
// file's partition; 409 Conflict is driver.ErrPrecondition.
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	body, err := encodeHistory(e, time.Now())
	if err != nil {
		return err
	}
	k := e.Key()
	etag, err := d.createItem(ctx, partitionOf(e.Path), body)
	if err != nil {
		d.history.Drop(k)
		return err
	}
	d.history.Put(k, historyState(&e, etag))
	return nil
}

// readHistory reads the entry stored under the key of path at version
// (which may be another version with the same key) and its ETag, and
// caches both; nil when there is none.
func (d *Driver) readHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, azcore.ETag, error) {
	pk, k := partitionOf(path), driver.HistoryKey(path, version)
	resp, err := d.c.ReadItem(ctx, key(pk), historyID(k), &azcosmos.ItemOptions{SessionToken: d.session(pk)})
	if statusOf(err) == 404 {
		d.history.Drop(k)
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	d.remember(pk, resp.SessionToken)
	e, err := decodeHistory(resp.Value)
	if err != nil {
		return nil, "", err
	}
	if e.Key() != k {
		return nil, "", fmt.Errorf("cosmosdb: history item %s holds %q, not %q", historyID(k), e.Key(), k)
	}
	etag := etagOf(resp)
	d.history.Put(k, historyState(e, etag))
	return e, etag, nil
}

// GetHistory implements driver.Historian with one point read.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	e, _, err := d.readHistory(ctx, path, version)
	if err != nil || e == nil || e.Version != version {
		return nil, err
	}
	return e, nil
}

// CompleteHistory implements driver.Historian: one PatchItem (pending set
// to false, the ttl recomputed) with If-Match on the ETag cached when the
// entry was put or read; otherwise, or after a 412, a read decides first.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	pk, k := partitionOf(path), driver.HistoryKey(path, version)
	st, cached := d.history.Get(k)
	expires := st.expires
	look := func(ctx context.Context) (azcore.ETag, bool, error) {
		e, etag, err := d.readHistory(ctx, path, version)
		switch {
		case err != nil:
			return "", true, err
		case e == nil:
			return "", true, errAbsent
		case e.Version != version:
			return "", true, errVersion
		case !e.Pending:
			return "", true, nil
		}
		expires = e.ExpiresAt
		return etag, false, nil
	}
	write := func(ctx context.Context, etag azcore.ETag) error {
		var ops azcosmos.PatchOperations
		ops.AppendSet("/pending", false)
		if _, ttl := expiry(expires, time.Now()); ttl != nil {
			// Cosmos DB counts an item's ttl from its last write.
			ops.AppendSet("/ttl", *ttl)
		}
		resp, err := d.c.PatchItem(ctx, key(pk), historyID(k), ops, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(pk, resp.SessionToken)
			d.history.Put(k, state{version: version, completed: true, expires: expires, etag: resp.ETag})
		}
		return err
	}
	return d.ifMatch(ctx, st.etag, cached && !st.completed && st.version == version, look, write, precondition, func() { d.history.Drop(k) })
}

// DropHistory implements driver.Historian like CompleteHistory, with
// DeleteItem.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	pk, k := partitionOf(path), driver.HistoryKey(path, version)
	st, cached := d.history.Get(k)
	look := func(ctx context.Context) (azcore.ETag, bool, error) {
		e, etag, err := d.readHistory(ctx, path, version)
		switch {
		case err != nil:
			return "", true, err
		case e == nil || e.Version != version:
			return "", true, nil
		case !e.Pending:
			return "", true, errEntryComplete
		}
		return etag, false, nil
	}
	write := func(ctx context.Context, etag azcore.ETag) error {
		resp, err := d.c.DeleteItem(ctx, key(pk), historyID(k), &azcosmos.ItemOptions{IfMatchEtag: &etag})
		if err == nil {
			d.remember(pk, resp.SessionToken)
			d.history.Drop(k)
		}
		return err
	}
	gone := func(error) error { return nil }
	return d.ifMatch(ctx, st.etag, cached && !st.completed && st.version == version, look, write, gone, func() { d.history.Drop(k) })
}

// ListHistory implements driver.Historian like ListFiles: a prefix that
// lies in one partition (it holds "/", or it is a top-level file's path
// and a space) is one single-partition query on the indexed key, ordered
// by it, reading only the page. Another prefix ("" or part of a first
// segment) fans out over every partition without ORDER BY (which a
// cross-partition query through the gateway cannot do): one query reads
// the keys under the prefix after p.After, sorted in Go, and one query per
// partition of the page reads its entries.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	// where returns the conditions for the keys under the prefix after
	// after.
	where := func(after string) (string, []azcosmos.QueryParameter) {
		conds := []string{"c.type = @type", "STARTSWITH(c.path, @prefix)"}
		params := []azcosmos.QueryParameter{param("@type", typeHistory), param("@prefix", p.Prefix)}
		if after != "" {
			conds = append(conds, "c.path > @after")
			params = append(params, param("@after", after))
		}
		return strings.Join(conds, " AND "), params
	}
	if pk, ok := historyPartition(p.Prefix); ok {
		// The partition key is filtered in WHERE as well: a server that
		// ignores the request's partition scope still answers correctly.
		conds, params := where(p.After)
		params = append(params, param("@pk", pk))
		sql := fmt.Sprintf("SELECT TOP %d * FROM c WHERE c.pk = @pk AND %s ORDER BY c.path ASC", p.Limit, conds)
		rows, err := d.query(ctx, &pk, sql, params, p.Limit)
		if err != nil {
			return nil, err
		}
		return decodeEntries(rows)
	}
	var out []driver.HistoryEntry
	after := p.After
	for len(out) < p.Limit {
		want := p.Limit - len(out)
		conds, params := where(after)
		rows, err := d.query(ctx, nil, "SELECT c.id, c.pk, c.path FROM c WHERE "+conds, params, 0)
		if err != nil {
			return nil, err
		}
		keys, err := sortedKeys(rows, want)
		if err != nil || len(keys) == 0 {
			return out, err
		}
		page, err := d.entriesAt(ctx, keys)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(keys) < want {
			break
		}
		// Entries removed between the two queries leave the page short:
		// go on after its last key.
		after = keys[len(keys)-1].Path
	}
	return out, nil
}

// keyRow is one row of a query for history keys.
type keyRow struct {
	ID   string `json:"id"`
	PK   string `json:"pk"`
	Path string `json:"path"`
}

// sortedKeys decodes key rows and returns the first n by key.
func sortedKeys(rows [][]byte, n int) ([]keyRow, error) {
	keys := make([]keyRow, 0, len(rows))
	for _, b := range rows {
		r, err := decodeRow[keyRow](b)
		if err != nil {
			return nil, err
		}
		keys = append(keys, r)
	}
	slices.SortFunc(keys, func(a, b keyRow) int { return strings.Compare(a.Path, b.Path) })
	return keys[:min(n, len(keys))], nil
}

// entriesAt reads the entries with the given keys, one query per
// partition (and per batchSize keys), sorted by key; entries removed
// meanwhile are left out.
func (d *Driver) entriesAt(ctx context.Context, keys []keyRow) ([]driver.HistoryEntry, error) {
	groups := map[string][]string{}
	for _, k := range keys {
		groups[k.PK] = append(groups[k.PK], k.Path)
	}
	var rows [][]byte
	for pk, ks := range groups {
		for chunk := range slices.Chunk(ks, batchSize) {
			params := []azcosmos.QueryParameter{param("@pk", pk), param("@type", typeHistory), param("@keys", chunk)}
			got, err := d.query(ctx, &pk, "SELECT * FROM c WHERE c.pk = @pk AND c.type = @type AND ARRAY_CONTAINS(@keys, c.path)", params, 0)
			if err != nil {
				return nil, err
			}
			rows = append(rows, got...)
		}
	}
	out, err := decodeEntries(rows)
	slices.SortFunc(out, func(a, b driver.HistoryEntry) int { return strings.Compare(a.Key(), b.Key()) })
	return out, err
}

func decodeEntries(rows [][]byte) ([]driver.HistoryEntry, error) {
	out := make([]driver.HistoryEntry, 0, len(rows))
	for _, b := range rows {
		e, err := decodeHistory(b)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, nil
}

// DeleteHistory implements driver.Historian in rounds of historyBatch
// entries: one query for their ids (single-partition when the prefix lies
// in one partition, as for ListHistory) and one TransactionalBatch of
// deletes per partition. A batch refused because an entry went meanwhile
// (a TTL, a concurrent forget) is redone as single deletes, each ignoring
// a 404. It stops after a round that finds fewer than historyBatch
// entries, or that removes none.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	where := "c.type = @type AND STARTSWITH(c.path, @prefix)"
	params := []azcosmos.QueryParameter{param("@type", typeHistory), param("@prefix", prefix)}
	var sql string
	pk, single := historyPartition(prefix)
	var scope *string
	if single {
		params = append(params, param("@pk", pk))
		sql = fmt.Sprintf("SELECT TOP %d c.id, c.pk, c.path FROM c WHERE c.pk = @pk AND %s", historyBatch, where)
		scope = &pk
	} else {
		sql = "SELECT c.id, c.pk, c.path FROM c WHERE " + where
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		rows, err := d.query(ctx, scope, sql, params, historyBatch)
		if err != nil {
			return total, err
		}
		keys, err := sortedKeys(rows, historyBatch)
		if err != nil {
			return total, err
		}
		n, err := d.deleteEntries(ctx, keys)
		total += n
		if err != nil || len(keys) < historyBatch || n == 0 {
			return total, err
		}
	}
}

// deleteEntries removes the given entries, one TransactionalBatch per
// partition, and returns how many it removed.
func (d *Driver) deleteEntries(ctx context.Context, keys []keyRow) (int, error) {
	groups := map[string][]keyRow{}
	var order []string
	for _, k := range keys {
		if _, ok := groups[k.PK]; !ok {
			order = append(order, k.PK)
		}
		groups[k.PK] = append(groups[k.PK], k)
		d.history.Drop(k.Path)
	}
	n := 0
	for _, pk := range order {
		b := d.c.NewTransactionalBatch(key(pk))
		for _, k := range groups[pk] {
			b.DeleteItem(k.ID, nil)
		}
		var resp azcosmos.TransactionalBatchResponse
		err := d.send(ctx, func(ctx context.Context) error {
			var err error
			resp, err = d.c.ExecuteTransactionalBatch(ctx, b, nil)
			return err
		})
		if err != nil {
			return n, err
		}
		d.remember(pk, &resp.SessionToken)
		if at, code := batchFailure(resp); resp.Success && at < 0 {
			n += len(groups[pk])
			continue
		} else if resp.Success {
			return n, fmt.Errorf("%w: operation %d answered %d in a batch reported as committed; the server does not apply batches atomically", errBatch, at, code)
		}
		for _, k := range groups[pk] {
			err := d.send(ctx, func(ctx context.Context) error {
				resp, err := d.c.DeleteItem(ctx, key(pk), k.ID, nil)
				if err == nil {
					d.remember(pk, resp.SessionToken)
				}
				return err
			})
			switch {
			case err == nil:
				n++
			case statusOf(err) != 404:
				return n, err
			}
		}
	}
	return n, nil
}
