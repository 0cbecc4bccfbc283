package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
		if !strings.HasPrefix(rel, p.Prefix) || rel <= p.After || !Listed(rel) {
			return nil // a temporary file, or not addressable as a memory path (nor the store's search index)
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
