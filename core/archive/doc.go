// Package archive reads and writes the tar archives of agentmem export and
// agentmem import, and of the console's export and import routes: one
// format, written and checked in one place.
//
// # Format
//
// An archive is a tar file: one regular entry per memory file, named by
// its store path and holding its content as plain Markdown, then
// [ManifestName], a JSON [Manifest] listing each file's path, version,
// size in bytes, SHA-256, metadata, and lifetime (expires_at and pinned,
// absent for a file that never expires and is not pinned; an expired file
// is never exported). The file entries carry no extended
// header of their own, so tar lists and unpacks an archive without a
// warning. Archives of the earlier format, whose entries carried their
// version and metadata in PAX records as well, still import: each such
// header must agree with the manifest.
//
// # Import
//
// [Import] spools the archive (to a temporary file, within
// ImportOptions.MaxBytes) and checks it whole against its manifest before
// it writes anything: every file listed exactly once with its size and
// SHA-256, nothing else, the manifest last, each path valid (and under
// ImportOptions.Prefix), each file's metadata valid. A damaged archive, or
// one without its manifest (cut short), writes nothing. Each file then
// gets the manifest's metadata (never an entry header's), with
// ImportOptions.Metadata set over it, and the manifest's expiry and pin; a
// file whose expiry has passed by the store's clock is skipped (counted
// in ImportStats.Expired), as an export would have left it out.
//
// Every write is a compare-and-swap: an absent file is created; a file
// already holding the same content, metadata, expiry and pin is left alone; a file
// that differs is reported in ImportStats.Differ and left as it is, unless
// ImportOptions.Force, which replaces it on the version just read. With
// ImportOptions.Operation, each file's write is exactly once under an
// operation derived from it, so a retried import (after a lost reply or a
// crash) applies each file once.
//
// # Errors
//
// An archive refused before anything was written wraps one of
// [ErrEmpty], [ErrNotArchive], [ErrDamaged], [ErrOutsidePrefix] or
// [ErrTooLarge]; check them with errors.Is. A store failure keeps the
// store's sentinel (store.ErrConflict for a file changed while it was
// being written, …) in the chain. Context errors pass through.
package archive
