// The request and result types of the store's methods.

package store

import (
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// File is the result of [Store.Read].
type File struct {
	// Path is the full store path.
	Path string
	// Content is at most the requested number of runes of the file.
	Content string
	// Version is the version of the whole file, even when Content is cut.
	Version string
	// OperationID is the id of the operation that wrote the current
	// content, or "" when the last write had none.
	OperationID string
	// Truncated reports that the file is longer than Content.
	Truncated bool
	// Metadata is the write metadata stored with the content; nil if none.
	Metadata map[string]string
	// ExpiresAt is when the file expires (see [WriteRequest].ExpiresAt);
	// zero for never.
	ExpiresAt time.Time
	// Pinned reports a pinned file (see [WriteRequest].Pinned).
	Pinned bool
}

// Operation is the idempotency key of one logical mutation.
type Operation struct {
	// ID identifies the mutation (for example one tool call of one run).
	ID string
	// Fingerprint digests the mutation's arguments; reusing ID with another
	// fingerprint is refused with ErrOperationConflict.
	Fingerprint string
}

// Mutation is the result of a write or delete, or of a receipt lookup.
type Mutation struct {
	// Version is the new version after a write; "" after a delete.
	Version string
	// Replayed reports that the result comes from the operation's receipt:
	// the mutation was not applied again by this call.
	Replayed bool
	// Existed reports whether the path existed just before the original
	// mutation.
	Existed bool
}

// WriteRequest is one write.
type WriteRequest struct {
	// Path is where to write.
	Path string
	// Content is the whole new content.
	Content string
	// Expected is the version the path must have now; "" means the path
	// must not exist.
	Expected string
	// Operation, when non-nil, makes the write idempotent.
	Operation *Operation
	// Metadata is stored atomically with the content. Nil or empty means
	// none; a write without metadata clears earlier metadata. Keys that
	// start with "agentmem:" are the store's own and refused
	// (ErrInvalidMetadata).
	Metadata map[string]string
	// ExpiresAt, when non-zero, is when the file expires: from then on no
	// read, listing, snapshot, search or export shows it (the store checks
	// on every read, whatever the backend), and the store records its
	// expiry as a delete by [ExpiryUpdatedBy] when PruneExpired, the
	// file's history, or a create of its path meets it, so Restore brings
	// it back. Like Metadata it belongs to this write: a write that leaves
	// it zero stores a file that never expires (the notebook and every
	// surface over it carry the file's expiry over; see docs/guarantees.md).
	ExpiresAt time.Time
	// Pinned marks a file the notebook never expires, consolidates away or
	// deletes by retention, and lists first. Like ExpiresAt it belongs to
	// this write. A write with both is refused (ErrInvalidLifetime).
	Pinned bool
}

// DeleteRequest is one delete.
type DeleteRequest struct {
	// Path is what to delete.
	Path string
	// Expected is the version the path must have now; "" means the path
	// must not exist (the delete then succeeds with Existed false).
	Expected string
	// Operation, when non-nil, makes the delete idempotent.
	Operation *Operation
	// Metadata says who deleted the file and why. Only the history keeps it
	// (Options.History); nil means none.
	Metadata map[string]string
}

// Capabilities reports which optional driver interfaces a store uses.
type Capabilities = driver.Capabilities
