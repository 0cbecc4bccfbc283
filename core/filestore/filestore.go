package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// SidecarDir is the name of the bookkeeping directory inside the root.
const SidecarDir = ".agentmem"

const tmpPrefix = ".agentmem-tmp-"

// IsTemporaryName reports whether name, one file or directory name (a
// path segment), is one of the driver's temporary files (".agentmem-tmp-…",
// written beside a file and renamed over it): never a memory file, never
// listed, never read.
func IsTemporaryName(name string) bool { return strings.HasPrefix(name, tmpPrefix) }

// Listed reports whether ListFiles lists a regular file at rel, a
// "/"-separated path under the store's root: its name is no temporary
// file's, and rel is a valid memory path (store.ValidatePath) or a row of
// the store's search index. A regular file outside the sidecar that is
// neither listed nor temporary ("café.md", "my notes.md") is in the
// directory but reached by no store operation.
func Listed(rel string) bool {
	return !IsTemporaryName(path.Base(rel)) && (store.ValidatePath(rel) == nil || search.IsIndexPath(rel))
}

// Driver stores memory files in a directory.
type Driver struct {
	root    string // real, absolute path of the directory
	sidecar string

	pruneBatch int                 // markers settled per hold of the lock (default DefaultPruneBatch)
	pruneHook  func()              // tests: called after each prune batch, the lock released
	pruneHold  func(time.Duration) // benchmarks: how long each prune batch held the lock

	historyRead func(path string) // tests: called with each history folder a listing reads
	crashAfter  string            // tests: store stops there, as a crash would: "marked", "recorded" or "renamed"

	indexes struct { // the lifetime indexes listings parsed last (see Driver.parsed)
		sync.Mutex
		m map[string]*parsedIndex // by index file
	}
}

var (
	_ driver.Driver         = (*Driver)(nil)
	_ driver.SnapshotReader = (*Driver)(nil)
	_ driver.Pruner         = (*Driver)(nil)
	_ driver.BatchGetter    = (*Driver)(nil)
	_ driver.ScopeReader    = (*Driver)(nil)
	_ driver.Appender       = (*Driver)(nil)
	_ driver.Historian      = (*Driver)(nil)
	_ driver.Namer          = (*Driver)(nil)
)

// Name implements driver.Namer: "filestore", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "filestore" }

// Options configures a Driver; nil means defaults.
type Options struct {
	// NoCreate makes New fail with an error wrapping
	// driver.ErrStoreNotFound when the directory does not exist, instead
	// of creating it. The sidecar directory inside an existing directory
	// is still made when missing. False (the default) creates the
	// directory and its parents.
	NoCreate bool
}

// New opens (creating if needed, unless opts.NoCreate) the directory dir
// as a file driver. A nil ctx and an empty dir fail with an error wrapping
// driver.ErrNilArgument (an empty dir would put the store in the working
// directory; pass "." to mean that). opts may be nil.
func New(ctx context.Context, dir string, opts *Options) (*Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("filestore: pass a context to New, not nil: %w", driver.ErrNilArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, fmt.Errorf(`filestore: pass New the directory to keep memory in, not "" ("." for the working directory): %w`, driver.ErrNilArgument)
	}
	if opts != nil && opts.NoCreate {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("filestore: the directory %s does not exist (create it first, or open it without create=false, which creates it): %w", dir, driver.ErrStoreNotFound)
		}
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
		if seg == SidecarDir || IsTemporaryName(seg) {
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
	tmp, err := stage(name, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// stage writes data to a temporary file beside name, for a rename over
// name, and returns the temporary file's name.
func stage(name string, data []byte) (string, error) {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*-"+filepath.Base(name))
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
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
	f := &driver.File{Path: path, Content: string(content)}
	if f.Version, f.OperationID, f.Metadata, err = d.row(path, recp, hashOf(content)); err != nil {
		return nil, nil, err
	}
	return f, recp, nil
}

// row returns the version, operation and metadata of the file path whose
// content hashes to h, rec being its sidecar record (or nil):
//   - content the record wrote: the record's row;
//   - content its previous state wrote: that state's row, as left by a
//     crash between the record and the rename ("not landed"), when the
//     lifetime index marks the path's entry pending (see read.go), or
//     the index is corrupt; otherwise (the old bytes put back by hand,
//     or a crash of a write that kept the lifetime, which marks nothing)
//     that state's row with the record's expiry and pin, as any hand
//     edit keeps them;
//   - any other content (changed by hand): version "ext-…" from the
//     hash, and the record's expiry and pin as its only metadata, so a
//     hand edit keeps the file's lifetime.
func (d *Driver) row(path string, rec *record, h string) (version, op string, meta map[string]string, err error) {
	r := written(rec, h)
	switch {
	case r == nil:
		return "ext-" + h[:32], "", rec.lifetimeKeys(nil), nil
	case r == rec:
		return r.Version, r.Op, r.Metadata, nil
	}
	pending, err := d.lifetimePending(path)
	if err != nil || pending {
		return r.Version, r.Op, r.Metadata, err
	}
	return r.Version, r.Op, rec.lifetimeKeys(r.Metadata), nil
}

// lifetime is the lifetime of the file the record states: its expiry and
// pin, none for a tombstone or no record.
func (r *record) lifetime() driver.Lifetime {
	if r == nil || r.Tombstone {
		return driver.Lifetime{}
	}
	return driver.LifetimeOf(r.Metadata)
}

// lifetimeKeys returns meta with its expiry and pin replaced by the
// record's (see lifetime).
func (r *record) lifetimeKeys(meta map[string]string) map[string]string {
	var own map[string]string
	if r != nil && !r.Tombstone {
		own = r.Metadata
	}
	return driver.KeepLifetime(meta, own)
}

// written returns the state of rec (the sidecar record, or nil) that wrote
// content whose hash is h: the record itself, or the previous state it
// keeps; nil when neither did (the file was changed by hand).
func written(rec *record, h string) *record {
	for r := rec; r != nil; r = r.Prev {
		if !r.Tombstone && r.Hash == h {
			return r
		}
		if r != rec {
			break // only the previous state counts
		}
	}
	return nil
}

func tombstone(path string, r *record) *driver.File {
	return &driver.File{Path: path, Version: r.Version, OperationID: r.Op, Tombstone: true, ExpiresAt: r.ExpiresAt}
}

// Close implements driver.Driver. It holds no resources.
func (d *Driver) Close() error { return nil }
