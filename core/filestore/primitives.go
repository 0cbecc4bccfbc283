package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agentmem/agentmem/core/driver"
)

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

// store writes f as the new state of its path, remembering prev: the
// content is staged, the path's lifetime index entry marked pending
// (when the lifetime changes; see markLifetime), the record written, the
// content renamed into place (or removed, for a tombstone), and the entry
// settled.
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
	var tmp string
	if !f.Tombstone {
		if tmp, err = stage(real, []byte(f.Content)); err != nil {
			return err
		}
		defer func() {
			if tmp != "" {
				os.Remove(tmp) // not renamed: a failure on the way
			}
		}()
	}
	settle, err := d.markLifetime(f.Path, rec.lifetime())
	if err != nil || d.crashAfter == "marked" {
		return err
	}
	if err := writeJSON(d.recordPath(f.Path), rec); err != nil || d.crashAfter == "recorded" {
		return err
	}
	if f.Tombstone {
		err = d.removeFile(real)
	} else if err = os.Rename(tmp, real); err == nil {
		tmp = ""
	}
	if err != nil || d.crashAfter == "renamed" {
		return err
	}
	return settle()
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
	settle, err := d.markLifetime(path, driver.Lifetime{})
	if err != nil {
		return err
	}
	if err := d.removeFile(real); err != nil {
		return err
	}
	if err := os.Remove(d.recordPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return settle()
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
	var files []string
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
			st, err := os.Stat(real)
			if err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		if !strings.HasPrefix(rel, p.Prefix) || rel <= p.After || !Listed(rel) {
			return nil // a temporary file, or not addressable as a memory path (nor the store's search index)
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	files = files[:min(len(files), p.Limit)]
	out := make([]driver.Entry, len(files))
	lr := lifetimeReader{d: d}
	for i, f := range files {
		l, err := lr.lifetime(f)
		if err != nil {
			return nil, err
		}
		out[i] = driver.Entry{Path: f, Lifetime: l}
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

// loadToWrite is loadLifetimes for a change of the index: a corrupt index
// is rebuilt from the folder's records, each file's entry as settle finds
// it, its corrupt field left set (the file on disk still is). The caller
// holds the exclusive lock.
func (d *Driver) loadToWrite(dir string) (lifetimeIndex, error) {
	ix, err := d.loadLifetimes(dir)
	if err != nil || !ix.corrupt {
		return ix, err
	}
	meta := filepath.Join(d.sidecar, "meta", filepath.FromSlash(dir))
	list, err := os.ReadDir(meta)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ix, err
	}
	ix.entries = map[string]lifeEntry{}
	for _, e := range list {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if e, keep := d.settle(path.Join(dir, name)); keep {
			ix.entries[name] = e
		}
	}
	return ix, nil
}

// markLifetime prepares the change of path's record to one whose
// lifetime is l: unless the index already holds l for path, settled, it
// marks the entry pending (with l) and returns the step that settles it
// (or drops it, for no lifetime) once the record and the content are in
// place. The caller holds the exclusive lock.
func (d *Driver) markLifetime(p string, l driver.Lifetime) (settle func() error, err error) {
	dir, name := splitDir(p)
	ix, err := d.loadToWrite(dir)
	if err != nil {
		return nil, err
	}
	e, ok := ix.entries[name]
	if !ix.corrupt && (ok && !e.Pending && e.lifetime() == l || !ok && l == (driver.Lifetime{})) {
		return func() error { return nil }, nil // every state on the way reads as l
	}
	if ix.entries == nil {
		ix.entries = map[string]lifeEntry{}
	}
	ix.entries[name] = lifeEntry{Expires: l.Expires, Pinned: l.Pinned, Pending: true}
	if err := d.saveLifetimes(dir, ix, name); err != nil {
		return nil, err
	}
	return func() error {
		if l == (driver.Lifetime{}) {
			delete(ix.entries, name)
		} else {
			ix.entries[name] = lifeEntry{Expires: l.Expires, Pinned: l.Pinned}
		}
		return d.saveLifetimes(dir, ix, name)
	}, nil
}

// saveLifetimes writes the index of folder dir (removing it, and the
// folders it leaves empty, when it holds nothing), changed for the file
// changed, first settling the pending entries of other files, which
// crashed writes left (settle). The caller holds the exclusive lock.
func (d *Driver) saveLifetimes(dir string, ix lifetimeIndex, changed string) error {
	for n, e := range ix.entries {
		if !e.Pending || n == changed {
			continue
		}
		if e, keep := d.settle(path.Join(dir, n)); keep {
			ix.entries[n] = e
		} else {
			delete(ix.entries, n)
		}
	}
	name := d.lifetimesPath(dir)
	if len(ix.entries) == 0 {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		root := d.lifetimesRoot()
		for p := filepath.Dir(name); p != root && strings.HasPrefix(p, root+string(filepath.Separator)); p = filepath.Dir(p) {
			if os.Remove(p) != nil {
				break // not empty: the folders above are in use
			}
		}
		return nil
	}
	return writeAtomic(name, formatLifetimes(ix.entries))
}

// settle returns the entry of path p that no write is under way for, and
// whether it needs one: the record's lifetime, settled, unless the file
// holds the content of the record's previous state only (a crash before
// the rename, read as that state while its entry is pending; see row),
// or the record or the file is unreadable, which stay pending so that
// listings read them (and report the error). The caller holds the
// exclusive lock.
func (d *Driver) settle(p string) (lifeEntry, bool) {
	var rec record
	ok, err := readJSON(d.recordPath(p), &rec)
	if err == nil && !ok {
		return lifeEntry{}, false // no record: no lifetime
	}
	l := rec.lifetime()
	pending := lifeEntry{Expires: l.Expires, Pinned: l.Pinned, Pending: true}
	if err != nil {
		return pending, true
	}
	real, err := d.target(p)
	if err != nil {
		return pending, true
	}
	content, err := os.ReadFile(real)
	switch {
	case err == nil:
		if r := written(&rec, hashOf(content)); r != nil && r != &rec {
			return pending, true
		}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.ENOTDIR):
		return pending, true
	}
	if l == (driver.Lifetime{}) {
		return lifeEntry{}, false
	}
	return lifeEntry{Expires: l.Expires, Pinned: l.Pinned}, true
}
