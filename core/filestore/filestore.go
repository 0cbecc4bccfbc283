// Package filestore is the driver that keeps memory as plain Markdown files
// in a directory a person can open, edit and back up: the file for path
// "kamal/main/MEMORY.md" is <dir>/kamal/main/MEMORY.md, byte for byte.
//
// Bookkeeping lives in the sidecar directory <dir>/.agentmem (never listed):
// a small JSON record per file with its version, content hash and
// metadata, one JSON file per operation receipt, the history of changes
// (when turned on), and a lock file. Content
// is written through temporary files named ".agentmem-tmp-…". The store
// refuses every path with a segment starting with ".agentmem"
// (store.ReservedSegmentPrefix) on every backend, with
// store.ErrInvalidPath wrapping store.ErrReservedPath.
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
// restoring the exact bytes restores the version.
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
// conflicts) and [driver.Historian] (the history of changes, below). No
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
// the files (the costly part) after releasing it. A directory written by
// an earlier release gets its index built once, by the first New.
//
// # Opening
//
// [New] (ctx, directory, *Options) returns the driver for [store.New];
// [Open] returns the store directly. Importing the package registers the
// store URL scheme "file" with [store.Register]: store.Open(ctx,
// "file:///abs/dir", nil) for an absolute directory, "file:rel/dir" for one
// relative to the working directory (created if needed). The URL takes no
// host and no parameters.
package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// SidecarDir is the name of the bookkeeping directory inside the root.
const SidecarDir = ".agentmem"

const tmpPrefix = ".agentmem-tmp-"

// Driver stores memory files in a directory.
type Driver struct {
	root    string // real, absolute path of the directory
	sidecar string

	pruneBatch int                 // markers settled per hold of the lock (default DefaultPruneBatch)
	pruneHook  func()              // tests: called after each prune batch, the lock released
	pruneHold  func(time.Duration) // benchmarks: how long each prune batch held the lock

	historyRead func(path string) // tests: called with each history folder a listing reads
}

var (
	_ driver.Driver         = (*Driver)(nil)
	_ driver.SnapshotReader = (*Driver)(nil)
	_ driver.Pruner         = (*Driver)(nil)
)

// Options configures a Driver. It has no fields yet; nil means defaults.
type Options struct{}

func init() { store.Register("file", openURL) }

// openURL opens "file:///abs/dir" or "file:rel/dir".
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	dir, err := driver.URLFilePath(u)
	if err != nil {
		return nil, err
	}
	if err := driver.CheckQuery(u); err != nil {
		return nil, err
	}
	return New(ctx, dir, nil)
}

// New opens (creating if needed) the directory dir as a file driver. An
// empty dir is refused (it would put the store in the working directory);
// pass "." to mean that. opts may be nil.
func New(ctx context.Context, dir string, opts *Options) (*Driver, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New(`filestore: name the directory to keep memory in (got ""; pass "." for the working directory)`)
	}
	if err := os.MkdirAll(filepath.Join(dir, SidecarDir, "receipts"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, SidecarDir, "meta"), 0o755); err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	side := filepath.Join(root, SidecarDir)
	if real, err := filepath.EvalSymlinks(side); err != nil || real != side {
		return nil, fmt.Errorf("filestore: %s must be a real directory: %w", side, driver.ErrPathEscape)
	}
	d := &Driver{root: root, sidecar: side, pruneBatch: DefaultPruneBatch}
	if err := d.buildExpiryIndex(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Open returns a store over the directory dir (see New), configured by
// opts.
func Open(ctx context.Context, dir string, opts *store.Options) (*store.Store, error) {
	d, err := New(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	return store.New(d, opts), nil
}

// Root returns the real path of the directory.
func (d *Driver) Root() string { return d.root }

// record is the sidecar state of one file.
type record struct {
	Version   string            `json:"version"`
	Hash      string            `json:"hash,omitempty"`
	Op        string            `json:"op,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Tombstone bool              `json:"tombstone,omitempty"`
	ExpiresAt time.Time         `json:"expires_at,omitzero"`
	Prev      *record           `json:"prev,omitempty"`
}

func hashOf(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// dirLocks holds one in-process lock per directory (real root path →
// *sync.RWMutex), taken before the file lock: callers in one process then
// queue in Go's fair order (a waiting writer keeps new readers out, and a
// mutex hands itself to a long waiter) instead of racing for the flock,
// so a prune between its batches lets waiting writers in.
var dirLocks sync.Map

// lock takes the sidecar lock and returns its release. A done ctx fails
// before anything is touched.
func (d *Driver) lock(ctx context.Context, exclusive bool) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu, _ := dirLocks.LoadOrStore(d.root, new(sync.RWMutex))
	rw := mu.(*sync.RWMutex)
	release := rw.RUnlock
	if exclusive {
		rw.Lock()
		release = rw.Unlock
	} else {
		rw.RLock()
	}
	f, err := os.OpenFile(filepath.Join(d.sidecar, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		release()
		return nil, err
	}
	unlock, err := lockFile(f, exclusive)
	if err != nil {
		f.Close()
		release()
		return nil, err
	}
	return func() { unlock(); f.Close(); release() }, nil
}

// reserved refuses a path with a segment that names the sidecar or a
// temporary file. The store never passes one (it refuses every segment
// starting with store.ReservedSegmentPrefix); this guards the directory
// against a caller that uses the driver directly.
func reserved(path string) error {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == SidecarDir || strings.HasPrefix(seg, tmpPrefix) {
			return fmt.Errorf("filestore: %q: %w", path, driver.ErrReservedPath)
		}
	}
	return nil
}

// target returns the real location of path, refusing escapes. The file
// itself need not exist; missing ancestors are fine.
func (d *Driver) target(path string) (string, error) {
	if err := reserved(path); err != nil {
		return "", err
	}
	p := filepath.Join(d.root, filepath.FromSlash(path))
	// Resolve the longest existing prefix.
	probe, rest := p, ""
	for {
		real, err := filepath.EvalSymlinks(probe)
		if err == nil {
			full := filepath.Join(real, rest)
			if full != d.root && !strings.HasPrefix(full, d.root+string(filepath.Separator)) {
				return "", fmt.Errorf("filestore: %q resolves outside the store directory: %w", path, driver.ErrPathEscape)
			}
			return full, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err // ENOTDIR: a file on the way, so the target is absent
		}
		parent := filepath.Dir(probe)
		if parent == probe {
			return "", err
		}
		rest = filepath.Join(filepath.Base(probe), rest)
		probe = parent
	}
}

func (d *Driver) recordPath(path string) string {
	return filepath.Join(d.sidecar, "meta", filepath.FromSlash(path)+".json")
}

func (d *Driver) receiptPath(id string) string {
	return filepath.Join(d.sidecar, "receipts", receiptKey(id)+".json")
}

func readJSON(name string, v any) (bool, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("filestore: corrupt %s: %w", name, err)
	}
	return true, nil
}

// writeAtomic replaces name with data through a temporary file and rename.
func writeAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*-"+filepath.Base(name))
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeAtomic(name, b)
}

// state reads the current row of path: the file as the store sees it, and
// its sidecar record (nil if none).
func (d *Driver) state(path string) (*driver.File, *record, error) {
	real, err := d.target(path)
	if err != nil {
		return nil, nil, err
	}
	var rec record
	hasRec, err := readJSON(d.recordPath(path), &rec)
	if err != nil {
		return nil, nil, err
	}
	content, err := os.ReadFile(real)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.ENOTDIR) {
		return nil, nil, err
	}
	exists := err == nil
	var recp *record
	if hasRec {
		recp = &rec
	}
	if !exists {
		switch {
		case hasRec && rec.Tombstone:
			return tombstone(path, &rec), recp, nil
		case hasRec && rec.Hash != "" && rec.Prev != nil && rec.Prev.Tombstone:
			return tombstone(path, rec.Prev), recp, nil // a create over a tombstone that did not land
		}
		return nil, recp, nil
	}
	h := hashOf(content)
	for r := recp; r != nil; r = r.Prev {
		if !r.Tombstone && r.Hash == h {
			return &driver.File{Path: path, Content: string(content), Version: r.Version, OperationID: r.Op, Metadata: r.Metadata}, recp, nil
		}
		if r != recp {
			break // only the previous state counts
		}
	}
	return &driver.File{Path: path, Content: string(content), Version: "ext-" + h[:32]}, recp, nil
}

func tombstone(path string, r *record) *driver.File {
	return &driver.File{Path: path, Version: r.Version, OperationID: r.Op, Tombstone: true, ExpiresAt: r.ExpiresAt}
}

// GetFile implements driver.Driver.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	f, _, err := d.state(path)
	return f, err
}

// ReadSnapshot implements driver.SnapshotReader: GetFile and ListFiles
// under one shared lock.
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	f, _, err := d.state(p.Path)
	if err != nil {
		return nil, nil, err
	}
	entries, err := d.list(p.List)
	if err != nil {
		return nil, nil, err
	}
	return f, entries, nil
}

// store writes f as the new state of its path, remembering prev.
func (d *Driver) store(f driver.File, prev *driver.File) error {
	real, err := d.target(f.Path)
	if err != nil {
		return err
	}
	if !f.Tombstone {
		if err := d.collides(f.Path, real); err != nil {
			return err
		}
	}
	rec := record{Version: f.Version, Op: f.OperationID, Metadata: f.Metadata, Tombstone: f.Tombstone, ExpiresAt: f.ExpiresAt}
	if !f.Tombstone {
		rec.Hash = hashOf([]byte(f.Content))
	}
	if f.Tombstone {
		if err := d.markTombstone(f.Path, f.ExpiresAt); err != nil {
			return err
		}
	}
	if prev != nil {
		rec.Prev = &record{Version: prev.Version, Op: prev.OperationID, Metadata: prev.Metadata, Tombstone: prev.Tombstone}
		if !prev.Tombstone {
			rec.Prev.Hash = hashOf([]byte(prev.Content))
		}
	}
	if err := writeJSON(d.recordPath(f.Path), rec); err != nil {
		return err
	}
	if f.Tombstone {
		return d.removeFile(real)
	}
	return writeAtomic(real, []byte(f.Content))
}

// removeFile removes the file at real, if any, and then the folders it
// leaves empty up to the root, so that a deleted file's folder no longer
// blocks a file of that name (the store refuses a create only while a
// file lies below it).
func (d *Driver) removeFile(real string) error {
	err := os.Remove(real)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		// A file lies on the way (a tombstone put below a file): nothing
		// to remove, and the folders above are no folders to clean up.
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	for dir := filepath.Dir(real); dir != d.root && strings.HasPrefix(dir, d.root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty (or already gone): the folders above are in use
		}
	}
	return nil
}

// collides reports driver.ErrPathCollision when real (the location of
// path) is a directory or one of its ancestors below the root is not: a
// directory cannot hold both "p/x.md" and "p/x.md/y.md". It runs before
// anything is written.
func (d *Driver) collides(path, real string) error {
	for p := real; p != d.root && strings.HasPrefix(p, d.root); p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			continue
		case err != nil:
			return err
		case p == real && st.IsDir(), p != real && !st.IsDir() && st.Mode()&fs.ModeSymlink == 0:
			return fmt.Errorf("filestore: %q: %w", path, driver.ErrPathCollision)
		}
	}
	return nil
}

// CreateFile implements driver.Driver.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := d.state(f.Path)
	if err != nil {
		return err
	}
	if cur != nil {
		return driver.ErrPrecondition
	}
	return d.store(f, nil)
}

// ReplaceFile implements driver.Driver.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := d.state(f.Path)
	if err != nil {
		return err
	}
	if cur == nil || cur.Version != expected {
		return driver.ErrPrecondition
	}
	if err := d.completeReplaced(f.Path, cur.Version); err != nil {
		return err
	}
	return d.store(f, cur)
}

// DeleteFile implements driver.Driver. The content goes first, then the
// record, so a crash in between reads as "deleted".
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, _, err := d.state(path)
	if err != nil {
		return err
	}
	if cur == nil || cur.Version != expected {
		return driver.ErrPrecondition
	}
	if err := d.completeReplaced(path, cur.Version); err != nil {
		return err
	}
	real, err := d.target(path)
	if err != nil {
		return err
	}
	if err := d.removeFile(real); err != nil {
		return err
	}
	if err := os.Remove(d.recordPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ListFiles implements driver.Driver. Tombstones are not listed.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return d.list(p)
}

// list is ListFiles under the lock.
func (d *Driver) list(p driver.ListParams) ([]driver.Entry, error) {
	// Start at the deepest directory the prefix names.
	dirRel := ""
	if i := strings.LastIndex(p.Prefix, "/"); i >= 0 {
		dirRel = p.Prefix[:i]
	}
	start := filepath.Join(d.root, filepath.FromSlash(dirRel))
	if dirRel != "" {
		real, err := filepath.EvalSymlinks(start)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil // ENOTDIR: a file on the way, so nothing below it
		}
		if err != nil {
			return nil, err
		}
		if real != start {
			return nil, nil // a symlinked prefix directory is never followed
		}
	}
	var paths []string
	err := filepath.WalkDir(start, func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(d.root, name)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if name == start {
				return nil
			}
			if rel == SidecarDir || !sharesPrefix(rel+"/", p.Prefix) {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() { // symlinks (to files or dirs) and others
			if e.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			real, err := d.target(rel)
			if err != nil {
				return nil // escaping links are never listed
			}
			if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		if strings.HasPrefix(e.Name(), tmpPrefix) || !strings.HasPrefix(rel, p.Prefix) || rel <= p.After {
			return nil
		}
		if store.ValidatePath(rel) != nil && !store.IsIndexPath(rel) {
			return nil // not addressable as a memory path (nor the store's search index)
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	paths = paths[:min(len(paths), p.Limit)]
	out := make([]driver.Entry, len(paths))
	for i, path := range paths {
		out[i] = driver.Entry{Path: path}
	}
	return out, nil
}

// sharesPrefix reports whether a directory (with trailing "/") may hold
// paths starting with prefix.
func sharesPrefix(dir, prefix string) bool {
	return strings.HasPrefix(dir, prefix) || strings.HasPrefix(prefix, dir)
}

// GetReceipt implements driver.Driver.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return d.receipt(id)
}

func (d *Driver) receipt(id string) (*driver.Receipt, error) {
	var r driver.Receipt
	ok, err := readJSON(d.receiptPath(id), &r)
	if err != nil || !ok {
		return nil, err
	}
	return &r, nil
}

// ReserveReceipt implements driver.Driver.
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := d.receipt(r.ID)
	if err != nil {
		return err
	}
	if cur != nil {
		return driver.ErrPrecondition
	}
	if err := d.markReceipt(r, nil); err != nil {
		return err
	}
	return writeJSON(d.receiptPath(r.ID), r)
}

// CompleteReceipt implements driver.Driver.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := d.receipt(r.ID)
	switch {
	case err != nil:
		return err
	case cur == nil || cur.Version != r.Version:
		return driver.ErrPrecondition
	case cur.Completed:
		return nil
	}
	if err := d.markReceipt(r, cur); err != nil {
		return err
	}
	return writeJSON(d.receiptPath(r.ID), r)
}

// DropReceipt implements driver.Driver.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := d.receipt(id)
	switch {
	case err != nil:
		return err
	case cur == nil:
		return nil
	case cur.Completed || cur.Version != version:
		return driver.ErrPrecondition
	}
	return os.Remove(d.receiptPath(id))
}

// Close implements driver.Driver. It holds no resources.
func (d *Driver) Close() error { return nil }
