// A file's lifetime: its expiry and its pin. Both ride in the file's row as
// store-owned metadata keys (driver.ExpiresKey, driver.PinnedKey), so every
// backend keeps them as it keeps metadata; this file turns them into the
// fields callers see, hides expired files on every read path, and records
// each expiry as a delete in the history.

package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// ExpiryUpdatedBy is the updated_by metadata of the delete the store makes
// when a file expires: the history shows it, and Restore undoes it.
const ExpiryUpdatedBy = "agentmem-expiry"

// UpdatedByKey is the metadata key naming who made a change (the
// notebook's memory.UpdatedByKey); the store sets it on its own deletes.
const UpdatedByKey = "updated_by"

// Entry is one listed file, as [Store.ListEntries] and
// [Store.ReadAndList] return it.
type Entry struct {
	// Path is the full store path.
	Path string
	// Pinned reports a pinned file.
	Pinned bool

	expires string // the row's expiry as driver.FormatExpiry wrote it; "" for never
}

// ExpiresAt is when the file expires; zero for never. It is read from the
// listed row when called, as [io/fs.DirEntry.Info] is, so that a listing
// whose caller never asks costs no time parsing.
func (e Entry) ExpiresAt() time.Time { return driver.ParseExpiry(e.expires) }

// expired reports whether l has expired by the store's clock.
func (s *Store) expired(l driver.Lifetime) bool { return l.ExpiredAt(s.now()) }

// live reports whether row f is a file a reader may see: present, not a
// tombstone, not expired.
func (s *Store) live(f *driver.File) bool {
	return f != nil && !f.Tombstone && !s.expired(driver.LifetimeOf(f.Metadata))
}

// rowMetadata is the metadata a write stores: the caller's (already
// normalised, so without store-owned keys) plus the lifetime.
func rowMetadata(meta map[string]string, expires time.Time, pinned bool) map[string]string {
	if expires.IsZero() && !pinned {
		return meta
	}
	out := make(map[string]string, len(meta)+1)
	maps.Copy(out, meta)
	if !expires.IsZero() {
		out[driver.ExpiresKey] = driver.FormatExpiry(expires)
	}
	if pinned {
		out[driver.PinnedKey] = "true"
	}
	return out
}

// userMetadata splits row metadata into what callers see as Metadata (nil
// for none) and the lifetime.
func userMetadata(m map[string]string) (map[string]string, time.Time, bool) {
	var out map[string]string
	for k, v := range m {
		if strings.HasPrefix(k, driver.StoreKeyPrefix) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[k] = v
	}
	l := driver.LifetimeOf(m)
	return out, driver.ParseExpiry(l.Expires), l.Pinned == "true"
}

// entryOf is the listed file of a driver entry.
func entryOf(e driver.Entry) Entry {
	return Entry{Path: e.Path, Pinned: e.Lifetime.Pinned == "true", expires: e.Lifetime.Expires}
}

// checkLifetime refuses a write that both pins and expires its file.
func checkLifetime(expires time.Time, pinned bool) error {
	if pinned && !expires.IsZero() {
		return fmt.Errorf("%w: pass ExpiresAt or Pinned, not both: a pinned file never expires", ErrInvalidLifetime)
	}
	return nil
}

// expireOperation is the operation of the delete that records the expiry
// of the row with version v: the same for every store that meets it, so
// the delete lands, and is recorded, once.
// A digest keeps it short whatever the version holds (over the primitives
// a version carries its writer's operation id).
func expireOperation(v string) *Operation {
	sum := sha256.Sum256([]byte(v))
	return &Operation{ID: "agentmem-expiry:" + hex.EncodeToString(sum[:16]), Fingerprint: "agentmem-expiry"}
}

// expire deletes the expired row f, recorded as a delete by
// [ExpiryUpdatedBy]. A row that changed meanwhile is left alone (the
// compare-and-swap fails and expire reports nothing).
func (s *Store) expire(ctx context.Context, f *driver.File) error {
	_, err := s.Delete(ctx, DeleteRequest{Path: f.Path, Expected: f.Version, Operation: expireOperation(f.Version),
		Metadata: map[string]string{UpdatedByKey: ExpiryUpdatedBy}})
	if err == nil || errors.Is(err, ErrConflict) {
		return nil
	}
	return err
}

// expireAt records the expiry of the file at path if it has expired, and
// reports whether it did.
func (s *Store) expireAt(ctx context.Context, path string) (bool, error) {
	f, err := s.d.GetFile(ctx, path)
	if err != nil || f == nil || f.Tombstone || !s.expired(driver.LifetimeOf(f.Metadata)) {
		return false, err
	}
	return true, s.expire(ctx, f)
}

// expireUnder records the expiry of every expired file under prefix and
// returns how many it found; it lists the prefix (the listing carries each
// file's lifetime) and reads only the expired ones.
func (s *Store) expireUnder(ctx context.Context, prefix string) (int, error) {
	var due []string
	err := s.walkRows(ctx, prefix, "", MaxWalkPageSize, true, func(e driver.Entry) bool {
		if s.expired(e.Lifetime) {
			due = append(due, e.Path)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range due {
		ok, err := s.expireAt(ctx, p)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// ListEntries is [Store.ListPaths] with each file's expiry and pin (which
// the listing carries, at no extra request).
func (s *Store) ListEntries(ctx context.Context, prefix string, limit int, opts ...ListOptions) (entries []Entry, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpListPaths})
	defer func() { o.done(err, false, len(entries)) }()
	after, err := s.checkList(ctx, prefix, limit, opts)
	if err != nil {
		return nil, err
	}
	return s.listEntries(ctx, prefix, after, limit, false, nil)
}
