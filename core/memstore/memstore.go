// Package memstore is the in-memory driver: the reference implementation of
// [driver.Driver] and every optional interface, for tests, examples and
// short-lived processes.
//
// # Errors
//
// The driver reports driver.ErrPrecondition for failed conditions,
// driver.ErrPathCollision for a file created where a file lies on its way
// or below it, and an error for any call after Close; nothing else fails.
//
// # Consistency
//
// One mutex serialises every call, so each primitive and [Driver.Mutate]
// are atomic, the file/folder check of a create included: concurrent
// creates of a file and a folder of one name never both land. Rows are deep-copied in and out: callers never share maps
// with the driver.
//
// # Capabilities
//
// [driver.Mutator] (with [driver.CollisionChecker]: Mutate refuses a
// colliding create under the same lock), [driver.Appender] (an append
// under the lock, which never conflicts), [driver.BatchGetter],
// [driver.ScopeReader], [driver.SnapshotReader] (a file and a listing under
// one lock), [driver.Pruner] and [driver.Historian] (entries in an
// ordered index, written with the change under the lock). Nothing
// survives the process.
//
// # Cost
//
// Paths are kept in a skip list, so a create or a delete costs O(log n) in
// the number of files and a listing or scope read costs what it returns.
// Expiring receipts and tombstones are kept in a heap by expiry, so
// [Driver.PruneExpired] costs what expired; it holds the mutex for
// [DefaultPruneBatch] rows at a time, so other calls run between batches.
//
// # Opening
//
// [New] returns an empty driver for [store.New]; [Open] returns a store
// seeded with files. Importing the package registers the store URL scheme
// "mem" with [store.Register]: store.Open(ctx, "mem://", nil) opens an
// empty in-memory store (the URL takes no host, path or parameters).
package memstore

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// Driver keeps files and receipts in memory. The zero value is not usable;
// call New.
type Driver struct {
	mu       sync.Mutex
	files    map[string]driver.File
	paths    *index // the keys of files, ordered
	receipts map[string]driver.Receipt
	history  map[string]driver.HistoryEntry // by key
	hkeys    *index                         // the keys of history, ordered
	expiry   expiry                         // when receipts, tombstones and history entries may be pruned
	closed   bool

	pruneBatch int    // rows removed per hold of mu (default DefaultPruneBatch)
	pruneHook  func() // tests: called between prune batches, mu released
}

// DefaultPruneBatch is how many expired rows [Driver.PruneExpired] removes
// per hold of the driver's mutex; other calls run between batches.
const DefaultPruneBatch = 256

var (
	_ driver.Driver           = (*Driver)(nil)
	_ driver.Mutator          = (*Driver)(nil)
	_ driver.CollisionChecker = (*Driver)(nil)
	_ driver.Appender         = (*Driver)(nil)
	_ driver.BatchGetter      = (*Driver)(nil)
	_ driver.ScopeReader      = (*Driver)(nil)
	_ driver.SnapshotReader   = (*Driver)(nil)
	_ driver.Pruner           = (*Driver)(nil)
)

// New returns an empty in-memory driver.
func New() *Driver {
	return &Driver{files: map[string]driver.File{}, paths: newIndex(), receipts: map[string]driver.Receipt{}, history: map[string]driver.HistoryEntry{}, hkeys: newIndex(), pruneBatch: DefaultPruneBatch}
}

// Open returns a store over a new in-memory driver, seeded with files
// (path → content). The map is copied; later changes to it are not seen.
// It fails with store.ErrInvalidPath for a bad path.
func Open(ctx context.Context, files map[string]string) (*store.Store, error) {
	s := store.New(New(), nil)
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range keys {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: files[p]}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func init() { store.Register("mem", openURL) }

// openURL opens "mem://": a new, empty driver.
func openURL(_ context.Context, u *url.URL) (driver.Driver, error) {
	if u.Opaque != "" || u.Host != "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return nil, driver.URLError(u, "write mem:// (an in-memory store has no host or path)")
	}
	if err := driver.CheckQuery(u); err != nil {
		return nil, err
	}
	return New(), nil
}

var errClosed = fmt.Errorf("memstore: driver is closed")

func copyFile(f driver.File) *driver.File {
	f.Metadata = maps.Clone(f.Metadata)
	return &f
}

func (d *Driver) lock() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return errClosed
	}
	return nil
}

// GetFile implements driver.Driver.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	if f, ok := d.files[path]; ok {
		return copyFile(f), nil
	}
	return nil, nil
}

// ListFiles implements driver.Driver.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	return d.list(p), nil
}

// ReadSnapshot implements driver.SnapshotReader: GetFile and ListFiles
// under one lock.
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	if err := d.lock(); err != nil {
		return nil, nil, err
	}
	defer d.mu.Unlock()
	var f *driver.File
	if cur, ok := d.files[p.Path]; ok {
		f = copyFile(cur)
	}
	return f, d.list(p.List), nil
}

// ChecksCollisions implements driver.CollisionChecker: Mutate refuses a
// colliding create under its lock.
func (d *Driver) ChecksCollisions() bool { return true }

// list is ListFiles under the lock.
func (d *Driver) list(p driver.ListParams) []driver.Entry {
	var out []driver.Entry
	for n := d.paths.seek(max(p.Prefix, p.After)); n != nil && len(out) < p.Limit; n = n.next[0] {
		path := n.key
		if !strings.HasPrefix(path, p.Prefix) {
			break
		}
		if path == p.After {
			continue
		}
		out = append(out, driver.Entry{Path: path, Tombstone: d.files[path].Tombstone})
	}
	return out
}

func (d *Driver) put(f driver.File) {
	if _, ok := d.files[f.Path]; !ok {
		d.paths.insert(f.Path)
	}
	d.files[f.Path] = *copyFile(f)
	if f.Tombstone {
		d.expiry.add(f.ExpiresAt, tombstoneRow, f.Path)
	}
}

func (d *Driver) remove(path string) {
	delete(d.files, path)
	d.paths.remove(path)
}

// putReceipt stores r and schedules its expiry when that changed.
func (d *Driver) putReceipt(r driver.Receipt) {
	if cur, ok := d.receipts[r.ID]; !ok || !cur.ExpiresAt.Equal(r.ExpiresAt) {
		d.expiry.add(r.ExpiresAt, receiptRow, r.ID)
	}
	d.receipts[r.ID] = r
}

// CreateFile implements driver.Driver.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if _, ok := d.files[f.Path]; ok {
		return driver.ErrPrecondition
	}
	if !f.Tombstone {
		if err := d.collides(f.Path); err != nil {
			return err
		}
	}
	d.put(f)
	return nil
}

// collides reports driver.ErrPathCollision when a file (not a tombstone)
// lies on path's way or below it, so that creating a file at path would
// make a file and a folder share a name. The caller holds d.mu, so the
// check and the create are one atomic step.
func (d *Driver) collides(path string) error {
	for i := strings.IndexByte(path, '/'); i >= 0; {
		if f, ok := d.files[path[:i]]; ok && !f.Tombstone {
			return fmt.Errorf("memstore: %q: %q is a file: %w", path, path[:i], driver.ErrPathCollision)
		}
		j := strings.IndexByte(path[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	below := path + "/"
	for n := d.paths.seek(below); n != nil && strings.HasPrefix(n.key, below); n = n.next[0] {
		if !d.files[n.key].Tombstone {
			return fmt.Errorf("memstore: %q: %q lies below it: %w", path, n.key, driver.ErrPathCollision)
		}
	}
	return nil
}

// ReplaceFile implements driver.Driver.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	cur, ok := d.files[f.Path]
	if !ok || cur.Version != expected {
		return driver.ErrPrecondition
	}
	if cur.Tombstone && !f.Tombstone {
		if err := d.collides(f.Path); err != nil {
			return err // a create over a tombstone
		}
	}
	d.put(f)
	return nil
}

// DeleteFile implements driver.Driver.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if cur, ok := d.files[path]; !ok || cur.Version != expected {
		return driver.ErrPrecondition
	}
	d.remove(path)
	return nil
}

// GetReceipt implements driver.Driver.
func (d *Driver) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	if r, ok := d.receipts[id]; ok {
		return &r, nil
	}
	return nil, nil
}

// ReserveReceipt implements driver.Driver.
func (d *Driver) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	if _, ok := d.receipts[r.ID]; ok {
		return driver.ErrPrecondition
	}
	d.putReceipt(r)
	return nil
}

// CompleteReceipt implements driver.Driver.
func (d *Driver) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	cur, ok := d.receipts[r.ID]
	switch {
	case !ok || cur.Version != r.Version:
		return driver.ErrPrecondition
	case cur.Completed:
		return nil
	}
	d.putReceipt(r)
	return nil
}

// DropReceipt implements driver.Driver.
func (d *Driver) DropReceipt(ctx context.Context, id, version string) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	cur, ok := d.receipts[id]
	switch {
	case !ok:
		return nil
	case cur.Completed || cur.Version != version:
		return driver.ErrPrecondition
	}
	delete(d.receipts, id)
	return nil
}

// Mutate implements driver.Mutator.
func (d *Driver) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	if err := d.lock(); err != nil {
		return driver.MutateResult{}, err
	}
	defer d.mu.Unlock()
	if p.Receipt != nil {
		if r, ok := d.receipts[p.Receipt.ID]; ok {
			return driver.MutateResult{Existing: &r}, nil
		}
	}
	cur, ok := d.files[p.Path]
	switch {
	case p.Expected == "" && ok:
		return driver.MutateResult{}, driver.ErrPrecondition
	case p.Expected != "" && (!ok || cur.Version != p.Expected):
		return driver.MutateResult{}, driver.ErrPrecondition
	case p.Kind == driver.KindWrite && p.Expected == "":
		if err := d.collides(p.Path); err != nil {
			return driver.MutateResult{}, err
		}
	}
	switch {
	case p.Kind == driver.KindWrite:
		d.put(driver.File{Path: p.Path, Content: p.Content, Version: p.Version, Metadata: p.Metadata, OperationID: receiptID(p.Receipt)})
	case ok:
		d.remove(p.Path)
	}
	if p.Receipt != nil {
		d.putReceipt(*p.Receipt)
	}
	if p.History != nil && (ok || p.Kind == driver.KindWrite) {
		d.putHistory(*p.History)
	}
	return driver.MutateResult{}, nil
}

// Append implements driver.Appender under the mutex.
func (d *Driver) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	if err := d.lock(); err != nil {
		return driver.AppendResult{}, err
	}
	defer d.mu.Unlock()
	if p.Receipt != nil {
		if r, ok := d.receipts[p.Receipt.ID]; ok {
			return driver.AppendResult{Existing: &r}, nil
		}
	}
	cur, ok := d.files[p.Path]
	if !ok || cur.Tombstone {
		return driver.AppendResult{Missing: true}, nil
	}
	if r, ok := d.receipts[cur.OperationID]; ok && cur.OperationID != "" && !r.Completed && r.Version == cur.Version {
		return driver.AppendResult{Unsettled: cur.Version}, nil
	}
	next := driver.AppendedContent(cur.Content, p.Entry)
	if utf8.RuneCountInString(next) > p.MaxChars {
		return driver.AppendResult{}, fmt.Errorf("memstore: %q would be over %d characters: %w", p.Path, p.MaxChars, driver.ErrTooLarge)
	}
	d.put(driver.File{Path: p.Path, Content: next, Version: p.Version, Metadata: p.Metadata, OperationID: receiptID(p.Receipt)})
	if p.Receipt != nil {
		r := *p.Receipt
		r.Expected, r.Existed = cur.Version, true
		d.putReceipt(r)
	}
	if p.History != nil {
		h := *p.History
		h.Previous, h.Content = cur.Version, next
		d.putHistory(h)
	}
	return driver.AppendResult{}, nil
}

func receiptID(r *driver.Receipt) string {
	if r == nil {
		return ""
	}
	return r.ID
}

// GetFiles implements driver.BatchGetter.
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	out := make([]*driver.File, 0, len(paths))
	for _, p := range paths {
		if f, ok := d.files[p]; ok {
			out = append(out, copyFile(f))
		}
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	var out []driver.ScopeFile
	for n := d.paths.seek(p.Prefix); n != nil && len(out) < p.Limit; n = n.next[0] {
		path := n.key
		rest, ok := strings.CutPrefix(path, p.Prefix)
		if !ok {
			break
		}
		f := d.files[path]
		if f.Tombstone || strings.Contains(rest, "/") {
			continue
		}
		content, cut := driver.CutRunes(f.Content, p.MaxChars)
		out = append(out, driver.ScopeFile{Path: path, Content: content, Truncated: cut})
	}
	return out, nil
}

// PruneExpired implements driver.Pruner. It removes the receipts and
// tombstones that expired before now in batches of [DefaultPruneBatch],
// releasing the mutex between batches, and costs what expired: an expiry
// heap names the candidates, never a scan of every row.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, more, err := d.pruneBatchOnce(now)
		n += k
		if err != nil || !more {
			return n, err
		}
		if d.pruneHook != nil {
			d.pruneHook()
		}
	}
}

// pruneBatchOnce takes up to d.pruneBatch due entries of the expiry heap
// under the mutex, removes the rows that did expire, and reports whether
// more may remain.
func (d *Driver) pruneBatchOnce(now time.Time) (int, bool, error) {
	if err := d.lock(); err != nil {
		return 0, false, err
	}
	defer d.mu.Unlock()
	n := 0
	for range max(1, d.pruneBatch) {
		e, ok := d.expiry.next(now)
		if !ok {
			return n, false, nil
		}
		switch e.kind {
		case receiptRow:
			if r, ok := d.receipts[e.key]; ok && !r.ExpiresAt.IsZero() && r.ExpiresAt.Before(now) {
				delete(d.receipts, e.key)
				n++
			}
		case historyRow:
			if h, ok := d.history[e.key]; ok && !h.ExpiresAt.IsZero() && h.ExpiresAt.Before(now) {
				d.removeHistory(e.key)
				n++
			}
		default:
			if f, ok := d.files[e.key]; ok && f.Tombstone && !f.ExpiresAt.IsZero() && f.ExpiresAt.Before(now) {
				d.remove(e.key)
				n++
			}
		}
	}
	return n, true, nil
}

// Close implements driver.Driver. Later calls fail.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}
