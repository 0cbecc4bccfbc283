package driver

import (
	"context"
	"time"
)

// HistoryEntry is one recorded change of a file, kept by a [Historian]
// when the store's history is on.
type HistoryEntry struct {
	// Path is the file the change made or removed.
	Path string
	// Version is the version the change made: the new file version for a
	// write; for a delete, a fresh version the store generated for it.
	// Unique forever, like every store version.
	Version string
	// Previous is the version the change replaced, "" when the file was
	// absent.
	Previous string
	// Kind is write or delete.
	Kind Kind
	// OperationID is the id of the operation that made the change, or "".
	OperationID string
	// Metadata is the change's metadata (who made it, in which run), nil
	// for none.
	Metadata map[string]string
	// Content is the whole content the write stored; "" for a delete. The
	// content a change replaced is the previous entry's.
	Content string
	// Time is when the store made the change.
	Time time.Time
	// ExpiresAt is when the entry may be removed by a TTL or a prune.
	ExpiresAt time.Time
	// Pending marks an entry recorded on the primitive path before its
	// change was applied: it stands for a change only once the store
	// confirms it (CompleteHistory), and is removed (DropHistory) when the
	// change did not land. Entries written by a [Mutator] or an [Appender]
	// are never pending.
	Pending bool
}

// Key returns the entry's [HistoryKey].
func (e HistoryEntry) Key() string { return HistoryKey(e.Path, e.Version) }

// versionStem is the length of the time-ordered part of a store version
// (26 characters of Crockford base32, as a ULID); anything after it names
// an operation or a fence.
const versionStem = 26

// HistoryKey returns the key that orders history entries: the path, a
// space, then the first 26 characters of the version with each digit
// inverted (in Crockford base32), so that within one path a later version
// sorts first. A space sorts before every path character, so the entries
// of "a.md" never interleave with those of "a.md.bak", and all of a
// path's entries start with path + " ". Drivers store the key and list by
// it; they never parse it.
func HistoryKey(path, version string) string {
	stem := version
	if len(stem) > versionStem {
		stem = stem[:versionStem]
	}
	b := make([]byte, 0, len(path)+1+len(stem))
	b = append(b, path...)
	b = append(b, ' ')
	for i := 0; i < len(stem); i++ {
		b = append(b, invertDigit(stem[i]))
	}
	return string(b)
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// invertDigit maps Crockford digit i to digit 31-i; other bytes map to
// themselves.
func invertDigit(c byte) byte {
	for i := 0; i < len(crockford); i++ {
		if crockford[i] == c {
			return crockford[len(crockford)-1-i]
		}
	}
	return c
}

// HistoryParams selects a page of history entries for
// [Historian.ListHistory].
type HistoryParams struct {
	// Prefix is a key prefix: a path prefix ("kamal/" for a user's files),
	// or a path and a space for one file's entries.
	Prefix string
	// After, when non-empty, starts the page strictly after this key.
	After string
	// Limit is the maximum number of entries to return (> 0).
	Limit int
}

// Historian is the storage of a file history, which a store with history
// turned on requires (store.Options.History). It is not a fast path: a
// driver that implements it offers it in every mode, and wrappers pass it
// on.
//
// A Historian that is also a [Mutator] stores MutateParams.History in the
// same atomic step as the change, and one that is an [Appender] stores
// AppendParams.History (filling in Previous and Content); neither writes
// the entry when the change is not applied. A [Pruner] also removes
// entries whose ExpiresAt has passed; drivers with a native TTL set it
// from ExpiresAt, as for receipts.
type Historian interface {
	// PutHistory stores e under e.Key() only if no entry has that key;
	// otherwise ErrPrecondition.
	PutHistory(ctx context.Context, e HistoryEntry) error

	// CompleteHistory marks the entry of path at version as no longer
	// pending; an entry already complete is left as it is; a missing entry
	// is ErrPrecondition.
	CompleteHistory(ctx context.Context, path, version string) error

	// DropHistory removes the entry of path at version if it is pending; a
	// missing entry is not an error; a complete one is ErrPrecondition.
	DropHistory(ctx context.Context, path, version string) error

	// GetHistory returns the entry of path at version (pending or not), or
	// (nil, nil) when there is none.
	GetHistory(ctx context.Context, path, version string) (*HistoryEntry, error)

	// ListHistory returns up to p.Limit entries whose key starts with
	// p.Prefix and is greater than p.After, sorted by key in code-point
	// (byte) order; fewer than p.Limit only when no more match. Expired
	// entries not yet removed may be returned; the store hides them.
	ListHistory(ctx context.Context, p HistoryParams) ([]HistoryEntry, error)

	// DeleteHistory removes every entry whose path starts with prefix
	// (pending or not) and returns how many it removed. Large histories are
	// removed in bounded batches, never holding what writers need for
	// longer than one batch.
	DeleteHistory(ctx context.Context, prefix string) (int, error)
}
