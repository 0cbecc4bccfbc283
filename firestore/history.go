package firestore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/agentmem/agentmem/core/driver"
)

// History entries are documents of the same collection with the ID
// "h~" + hex SHA-256 of their key (driver.HistoryKey: the path, a space and
// the inverted version, which may run past the 1,500-byte ID limit) and the
// key itself in the field key, which orders them: ListHistory and
// DeleteHistory are range queries on key, served by its automatic
// single-field index like ListFiles' queries on path. An entry has no path
// field (it names its path target), so file listings never see it, and
// files and receipts have no key field, so history queries never see them.
const historyPrefix = "h~"

// Field names of history entries (with fTarget, fVersion, fKind,
// fOperation, fMetadata, fContent, fExpiresAt and fAttempt).
const (
	fKey      = "key"      // driver.HistoryKey: the order of ListHistory
	fPrevious = "previous" // the version the change replaced
	fTime     = "time"     // when the change was made
	fPending  = "pending"  // recorded by PutHistory before its change
)

// maxKeyBytes bounds a history key: Firestore compares only the first
// 1,500 bytes of an indexed string, so a longer key could not be ordered.
// With the 27 bytes after the path, paths up to 1,473 bytes have a history.
const maxKeyBytes = maxIDBytes

// defaultHistoryBatch is how many entries DeleteHistory removes per query
// and Commit (Firestore allows 500 writes in one Commit).
const defaultHistoryBatch = 500

// HistoryID returns the document ID of the history entry with key
// (driver.HistoryKey).
func HistoryID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return historyPrefix + hex.EncodeToString(sum[:])
}

func (d *Driver) historyRef(key string) *firestore.DocumentRef { return d.coll.Doc(HistoryID(key)) }

// historyFields returns the fields of e's document, and attempt (a token
// that recognises PutHistory's own create when the client re-sends it)
// unless it is "". An entry whose key or document is over Firestore's
// limits is driver.ErrTooLarge.
func (d *Driver) historyFields(e driver.HistoryEntry, attempt string) ([]firestore.Update, error) {
	key := e.Key()
	set := func(u []firestore.Update, path string, v any, ok bool) []firestore.Update {
		if ok {
			u = append(u, firestore.Update{Path: path, Value: v})
		}
		return u
	}
	u := []firestore.Update{
		{Path: fKey, Value: key},
		{Path: fTarget, Value: e.Path},
		{Path: fVersion, Value: e.Version},
		{Path: fKind, Value: string(e.Kind)},
		{Path: fContent, Value: e.Content},
		{Path: fPending, Value: e.Pending},
	}
	u = set(u, fPrevious, e.Previous, e.Previous != "")
	u = set(u, fOperation, e.OperationID, e.OperationID != "")
	if e.Metadata != nil {
		b, err := json.Marshal(e.Metadata)
		if err != nil {
			return nil, err
		}
		u = append(u, firestore.Update{Path: fMetadata, Value: string(b)})
	}
	u = set(u, fTime, e.Time, !e.Time.IsZero())
	u = set(u, fExpiresAt, e.ExpiresAt, !e.ExpiresAt.IsZero())
	u = set(u, fAttempt, attempt, attempt != "")
	if len(key) > maxKeyBytes {
		return nil, fmt.Errorf("firestore: history of %q: the key is %d bytes, over Firestore's %d-byte indexed-string limit: %w", e.Path, len(key), maxKeyBytes, driver.ErrTooLarge)
	}
	if size := docSize(d.historyRef(key).Path, u); size > maxDocBytes {
		return nil, fmt.Errorf("firestore: history entry of %q (%d bytes): %w", e.Path, size, driver.ErrTooLarge)
	}
	return u, nil
}

// decodeHistory turns an entry's snapshot into a driver.HistoryEntry.
func decodeHistory(s *firestore.DocumentSnapshot) (*driver.HistoryEntry, error) {
	m := s.Data()
	e := &driver.HistoryEntry{
		Path:        getString(m, fTarget),
		Version:     getString(m, fVersion),
		Previous:    getString(m, fPrevious),
		Kind:        driver.Kind(getString(m, fKind)),
		OperationID: getString(m, fOperation),
		Content:     getString(m, fContent),
		Time:        getTime(m, fTime),
		ExpiresAt:   getTime(m, fExpiresAt),
		Pending:     getBool(m, fPending),
	}
	if js := getString(m, fMetadata); js != "" {
		if err := json.Unmarshal([]byte(js), &e.Metadata); err != nil {
			return nil, fmt.Errorf("firestore: metadata of history entry %s: %w", s.Ref.ID, err)
		}
	}
	if e.Path == "" || e.Version == "" || getString(m, fKey) != e.Key() {
		return nil, fmt.Errorf("firestore: document %s is not a history entry", s.Ref.ID)
	}
	return e, nil
}

// getHistory reads the entry of path at version with its snapshot, or
// nils when there is none (an entry under the same key for another
// version counts as none).
func (d *Driver) getHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, *firestore.DocumentSnapshot, error) {
	key := driver.HistoryKey(path, version)
	if len(key) > maxKeyBytes {
		return nil, nil, nil // never stored
	}
	s, err := d.historyRef(key).Get(ctx)
	if notFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, "get history", err)
	}
	e, err := decodeHistory(s)
	if err != nil {
		return nil, nil, err
	}
	if e.Version != version {
		return nil, nil, nil
	}
	return e, s, nil
}

// PutHistory implements driver.Historian with one Create. On
// ALREADY_EXISTS it re-reads: an entry holding this call's attempt token
// is its own, re-sent by the client after a lost reply.
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return d.putHistory(ctx, e, hex.EncodeToString(b[:]))
}

// putHistory creates e's document with the attempt token of one
// PutHistory call.
func (d *Driver) putHistory(ctx context.Context, e driver.HistoryEntry, attempt string) error {
	u, err := d.historyFields(e, attempt)
	if err != nil {
		return err
	}
	ref := d.historyRef(e.Key())
	return create(ctx, "put history", ref, rowData(u), func() (bool, error) {
		s, err := ref.Get(ctx)
		if notFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return getString(s.Data(), fAttempt) == attempt, nil
	})
}

// CompleteHistory implements driver.Historian: a read, then (when the
// entry is pending) an update-time conditional update of pending.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	return guarded(ctx, "complete history", func(bool) (verdict, *firestore.DocumentSnapshot, error) {
		e, snap, err := d.getHistory(ctx, path, version)
		switch {
		case err != nil:
			return 0, nil, err
		case e == nil:
			return refused, nil, nil
		case !e.Pending:
			return done, nil, nil
		}
		return proceed, snap, nil
	}, updateAt(ctx, []firestore.Update{{Path: fPending, Value: false}}))
}

// DropHistory implements driver.Historian: a read, then (when the entry is
// pending) an update-time conditional delete. An entry that is gone counts
// as dropped, whoever removed it.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	return guarded(ctx, "drop history", func(bool) (verdict, *firestore.DocumentSnapshot, error) {
		e, snap, err := d.getHistory(ctx, path, version)
		switch {
		case err != nil:
			return 0, nil, err
		case e == nil:
			return done, nil, nil
		case !e.Pending:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, deleteAt(ctx))
}

// GetHistory implements driver.Historian with one document read.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	e, _, err := d.getHistory(ctx, path, version)
	return e, err
}

// historyQuery selects the entries whose key starts with prefix and is
// greater than after (when after is a key of the prefix), ordered by key.
func (d *Driver) historyQuery(prefix, after string) firestore.Query {
	q := d.coll.Where(fKey, ">=", prefix)
	if after != "" && after >= prefix {
		q = d.coll.Where(fKey, ">", after)
	}
	if end, ok := driver.PrefixEnd(prefix); ok {
		q = q.Where(fKey, "<", end)
	}
	return q.OrderBy(fKey, firestore.Asc)
}

// ListHistory implements driver.Historian with one range query on key
// (one RunQuery): it reads the entries it returns and no others.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	if p.Limit <= 0 || len(p.Prefix) > maxKeyBytes {
		return nil, nil // no key that long is stored
	}
	it := d.historyQuery(p.Prefix, p.After).Limit(p.Limit).Documents(ctx)
	defer it.Stop()
	var out []driver.HistoryEntry
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fail(ctx, "list history", err)
		}
		e, err := decodeHistory(s)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
}

// DeleteHistory implements driver.Historian in batches: a range query on
// key that returns only the IDs of up to 500 entries, then one Commit
// deleting them (no preconditions, no locks), until a batch comes back
// short.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	if len(prefix) > maxKeyBytes {
		return 0, nil
	}
	n := 0
	for {
		docs, err := d.historyQuery(prefix, "").Select().Limit(d.historyBatch).Documents(ctx).GetAll()
		if err != nil {
			return n, fail(ctx, "delete history", err)
		}
		if len(docs) == 0 {
			return n, nil
		}
		//lint:ignore SA1019 a WriteBatch deletes a whole batch in one RPC.
		b := d.client.Batch()
		for _, s := range docs {
			b.Delete(s.Ref)
		}
		if _, err := b.Commit(ctx); err != nil {
			return n, fail(ctx, "delete history", err)
		}
		n += len(docs)
		if len(docs) < d.historyBatch {
			return n, nil
		}
	}
}
