// Package filestore is the driver that keeps memory as plain Markdown files
// in a directory a person can open, edit and back up: the file for path
// "kamal/main/MEMORY.md" is <dir>/kamal/main/MEMORY.md, byte for byte.
//
// Bookkeeping lives in the sidecar directory <dir>/.agentmem (never listed):
// a small JSON record per file with its version, content hash and
// metadata, one JSON file per operation receipt, the history of changes
// (when turned on), a lifetime index, and a lock file. Content
// is written through temporary files named ".agentmem-tmp-…". The store
// refuses every path with a segment starting with ".agentmem"
// (store.ReservedSegmentPrefix) on every backend, with
// store.ErrInvalidPath wrapping store.ErrReservedPath.
//
// A file's lifetime (its expiry and pin, driver.ExpiresKey and
// driver.PinnedKey) is metadata in its record; so that a listing reports
// it (driver.Entry.Lifetime) without reading one record per file, each
// folder holding a file with a lifetime has one small index,
// .agentmem/lifetimes/<folder>/~index: each such file's lifetime, settled
// or pending. A listing reads the index of each folder it lists (none:
// one failed open) and trusts a settled entry without touching the file;
// a file with a pending entry (a write that crashed) is read as GetFile
// reads it, so a listing always reports the lifetime a read would. A
// change whose lifetime differs from the index's marks the entry pending
// before the record and the content and settles it after them (a change
// that keeps the lifetime writes no index); the next write in the folder
// settles what a crash left, and a corrupt index is read around (file by
// file) and rebuilt by the next write in its folder. Directories written
// before the index existed have no lifetimes, and need none.
//
// # Errors
//
// Besides driver.ErrPrecondition for failed conditions: store.ErrPathEscape
// for a target whose real location is outside the directory,
// store.ErrReservedPath for the sidecar's name, and the operating system's
// errors (errors.As finds *fs.PathError) for I/O failures; a corrupt sidecar
// record is an error naming its file, never silently ignored.
//
// # Consistency
//
// Every primitive runs under an advisory lock (flock) on the sidecar's lock
// file, exclusive for changes and shared for reads, so several goroutines
// and several processes may use one directory safely. On platforms without
// flock (Windows, Solaris) the lock is process-wide only: use one process
// per directory there. Content is replaced
// atomically (a temporary file in the same directory, then rename). A
// file's record keeps the previous state too, so a crash between writing
// the record and renaming the content is read as "not landed".
//
// A file edited outside agentmem gets a version derived from its content
// hash ("ext-…"), so a compare-and-swap with an older version conflicts and
// restoring the exact bytes restores the version (the previous state's
// bytes: that state's version). A file edited by hand keeps its record's
// expiry and pin, as a change through any surface does; an "ext-" file
// has no other metadata.
//
// A file and a folder cannot share a name: creating "p/x.md/y.md" while
// the file "p/x.md" exists, or "q/y" while "q/y/z.md" exists, fails with
// store.ErrPathCollision and writes nothing; reading such a path finds
// nothing. The store refuses such creates on every backend; this driver
// also refuses them under its lock, so concurrent creates of a file and a
// folder of one name never both land. Deleting a file removes the folders
// it leaves empty, so the name is free again.
//
// Symbolic links never let a path escape the directory: a target whose real
// location is outside it fails with store.ErrPathEscape, listing never
// follows a symlinked directory, and a symlinked prefix lists nothing.
//
// # Capabilities
//
// The nine primitives, [driver.BatchGetter] (many files under one shared
// lock), [driver.ScopeReader] (search reads a scope's folder once and each
// file's bounded prefix), [driver.SnapshotReader] (a file and a listing
// under one shared lock), [driver.Pruner] (receipts, tombstones and
// history entries are removed by [store.Store.PruneExpired]),
// [driver.Appender] (an append under the exclusive lock, which never
// conflicts, counts an expired file as missing and keeps the file's
// lifetime) and [driver.Historian] (the history of changes, below). No
// atomic mutation: the store runs its receipt algorithm over the
// primitives.
//
// # History
//
// With history on (store.Options.History) every change is kept as one
// JSON file (its whole content, metadata, versions and times) under
// <dir>/.agentmem/history, in a folder per file path: the entries of
// "kamal/main/MEMORY.md" are in .agentmem/history/kamal/main/MEMORY.md/,
// each named "~" + the inverted version part of its key, so the folder
// read in name order lists them newest first. They are never listed as
// memory files. A file's history costs one folder read plus one read per
// entry returned; a user's ("kamal/") reads that user's folders only, in
// key order, and stops when the page is full. A write or delete costs two
// calls more (the store puts the entry pending before the change and
// completes it, a rename, after it: 5 calls for an idempotent write
// instead of 3); [Driver.Append] writes its entry under the same lock,
// pending before the file and completed after it, in its one call. Each
// entry has a marker in the expiry index (kind "h"), so the prune removes
// expired entries as it removes receipts, and [store.Store.ForgetHistory]
// removes a prefix's entries 64 at a time under the exclusive lock. History
// costs disk: each change keeps its whole content until it expires (30
// days by default).
//
// # Pruning
//
// An expiry index in <dir>/.agentmem/expiry (one empty marker file per
// receipt or tombstone, in a folder per minute of its expiry) tells
// PruneExpired what expired, so a prune with nothing expired reads one
// folder listing, and one with k expired rows does O(k) work. It takes the
// exclusive lock for [DefaultPruneBatch] rows and [PruneBatchTime] at a
// time, so other callers wait for one short batch at most; under the lock
// it only checks each row and moves it into a trash folder, and it frees
// the files (the costly part) after releasing it. A directory without the
// index gets it built once, by the first New.
//
// # Opening
//
// [New] (ctx, directory, *Options) returns the driver for [store.New]; it
// creates the directory when missing unless [Options].NoCreate is set.
// Importing the package registers the store URL scheme "file" with
// [store.Register]: store.Open(ctx, "file:///abs/dir", nil) for an
// absolute directory, "file:rel/dir" for one relative to the working
// directory (created if needed). The URL takes no host and no parameters.
package filestore
