package store

import (
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
)

// The errors a Store reports. The set is closed and only grows.
var (
	// ErrNotFound reports that no file exists at the path.
	ErrNotFound = errors.New("agentmem: memory file not found")
	// ErrConflict reports that the path's current version differs from the
	// expected one; nothing was written.
	ErrConflict = errors.New("agentmem: memory path changed before it could be written")
	// ErrOperationConflict reports that a known operation id was reused
	// with a different fingerprint; nothing was written.
	ErrOperationConflict = errors.New("agentmem: operation was reused with different arguments")
	// ErrInvalidPath reports a path or prefix that breaks the path rules.
	ErrInvalidPath = errors.New("agentmem: invalid memory path")
	// ErrInvalidBound reports a non-positive max_chars or limit.
	ErrInvalidBound = errors.New("agentmem: bound must be positive")
	// ErrInvalidSearchMode reports a search.Request.Mode that is not one of
	// the search.Mode constants.
	ErrInvalidSearchMode = errors.New("agentmem: unknown search mode: use \"bm25\", \"literal\", \"hybrid\" (with an embedder) or \"\" for the default")
	// ErrInvalidMetadata reports metadata with NUL or over 4,096 chars.
	ErrInvalidMetadata = errors.New("agentmem: invalid write metadata")
	// ErrInvalidLifetime reports a write that pins a file and gives it an
	// expiry: a pinned file never expires, so pass one or the other.
	ErrInvalidLifetime = errors.New("agentmem: invalid file lifetime")
	// ErrInvalidContent reports content that is not valid UTF-8; every
	// backend stores text.
	ErrInvalidContent = errors.New("agentmem: content must be valid UTF-8")
	// ErrInvalidOperation reports an operation with an empty or oversized
	// id or fingerprint.
	ErrInvalidOperation = errors.New("agentmem: invalid operation")
	// ErrNoDriver reports a Store made by New with a nil driver; every
	// method fails with it.
	ErrNoDriver = errors.New("agentmem: store has no driver: pass a backend's driver to store.New")
	// ErrPathEscape reports a path that resolves outside the store's root
	// (file stores with symbolic links).
	ErrPathEscape = driver.ErrPathEscape
	// ErrReservedPath reports a path the backend keeps for its bookkeeping.
	// The store refuses paths with a segment starting with
	// ReservedSegmentPrefix itself, with an error that wraps both
	// ErrInvalidPath and ErrReservedPath.
	ErrReservedPath = driver.ErrReservedPath
	// ErrPathCollision reports a create whose path would make a file and a
	// folder share a name: a file lies on its way ("p/x.md" for
	// "p/x.md/y.md") or below it ("q/y/z.md" for "q"). Nothing was
	// written. Every backend refuses such creates alike (a file system
	// cannot hold both); updates and deletes never collide, and the name is
	// free again once the blocking file is deleted.
	ErrPathCollision = driver.ErrPathCollision
	// ErrTooLarge reports a file over a backend's item size limit.
	ErrTooLarge = driver.ErrTooLarge
	// ErrStoreNotFound reports a store (a database file, a directory, a
	// table or container) that does not exist when the backend's
	// Options.NoCreate asks not to create it.
	ErrStoreNotFound = driver.ErrStoreNotFound
	// ErrNilArgument reports a required argument given as nil or empty
	// (a client, a table name, a directory).
	ErrNilArgument = driver.ErrNilArgument
	// ErrInvalidURL reports a store URL that does not parse, or that its
	// backend refuses (a host where none belongs, an unknown or malformed
	// parameter). The error says what to fix and never repeats a password
	// or a query.
	ErrInvalidURL = driver.ErrInvalidURL
	// ErrUnknownScheme reports a store URL whose scheme no imported package
	// registered; the error names the registered schemes and, for the
	// schemes of agentmem's own modules, the import that adds it. It also
	// matches ErrInvalidURL.
	ErrUnknownScheme = errors.New("agentmem: unknown store URL scheme")
	// ErrUnknownEmbedder reports an embedder name (the URL's embedder=, or
	// OpenEmbedder's spec) that no imported package registered; the error
	// names the registered embedders and, for agentmem's own, the import
	// that adds it. It also matches ErrInvalidURL.
	ErrUnknownEmbedder = errors.New("agentmem: unknown embedder")
	// ErrHistoryUnsupported reports a store whose history is on
	// (Options.History), or a history read, over a driver that keeps no
	// history (no driver.Historian): turn history off or use a backend
	// that keeps it. Nothing was written.
	ErrHistoryUnsupported = errors.New("agentmem: this backend keeps no history")
)

// detailed is an error with its own text that errors.Is and errors.As
// match against each of errs: a sentinel and the cause, without repeating
// the sentinel's words in the text.
type detailed struct {
	msg  string
	errs []error
}

func (e *detailed) Error() string   { return e.msg }
func (e *detailed) Unwrap() []error { return e.errs }

// conflictError reports that the path changed before it could be written
// or deleted: ErrConflict, with the driver's error (usually
// driver.ErrPrecondition wrapping the backend's) in the chain.
func conflictError(path, verb string, cause error) error {
	return &detailed{
		msg:  fmt.Sprintf("agentmem: memory path %q changed before it could be %s: re-read it and retry with its current version", path, verb),
		errs: []error{ErrConflict, cause},
	}
}
