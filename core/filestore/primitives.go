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
	"time"

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
// content is staged, the lifetime index noted (see noteLifetime), the
// record written, and the content renamed into place (or removed, for a
// tombstone); a record that keeps no lifetime then drops its path's
// index entry.
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
	var kept driver.Lifetime
	if prev != nil {
		rec.Prev = &record{Version: prev.Version, Op: prev.OperationID, Metadata: prev.Metadata, Tombstone: prev.Tombstone}
		if !prev.Tombstone {
			rec.Prev.Hash = hashOf([]byte(prev.Content))
		}
		kept = driver.LifetimeOf(prev.Metadata)
	}
	var tmp string
	var staged fs.FileInfo
	if !f.Tombstone {
		if tmp, staged, err = stage(real, []byte(f.Content)); err != nil {
			return err
		}
		defer func() {
			if tmp != "" {
				os.Remove(tmp) // not renamed: a failure on the way
			}
		}()
	}
	l := driver.LifetimeOf(f.Metadata)
	if staged != nil && (l != (driver.Lifetime{}) || kept != (driver.Lifetime{})) {
		if staged, err = backdate(tmp, staged); err != nil {
			return err
		}
	}
	if err := d.noteLifetime(f.Path, l, kept, staged); err != nil {
		return err
	}
	if err := writeJSON(d.recordPath(f.Path), rec); err != nil {
		return err
	}
	if f.Tombstone {
		err = d.removeFile(real)
	} else if err = os.Rename(tmp, real); err == nil {
		tmp = ""
	}
	if err != nil || l != (driver.Lifetime{}) || kept != (driver.Lifetime{}) {
		return err
	}
	return d.dropLifetime(f.Path)
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
	return d.dropLifetime(path)
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
	type listed struct {
		path string
		info infoer // the file's stat (a link's target's), read only if its folder's lifetime index names it
	}
	var files []listed
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
		var info infoer = e
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
			info = knownInfo{st}
		}
		if !strings.HasPrefix(rel, p.Prefix) || rel <= p.After || !Listed(rel) {
			return nil // a temporary file, or not addressable as a memory path (nor the store's search index)
		}
		files = append(files, listed{rel, info})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b listed) int { return strings.Compare(a.path, b.path) })
	files = files[:min(len(files), p.Limit)]
	out := make([]driver.Entry, len(files))
	lr := lifetimeReader{d: d}
	for i, f := range files {
		l, err := lr.lifetime(f.path, f.info)
		if err != nil {
			return nil, err
		}
		out[i] = driver.Entry{Path: f.path, Lifetime: l}
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
// is rebuilt from the records of the folder's files, each entry without a
// fingerprint (so listings read those files until their next change).
// The caller holds the exclusive lock.
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
		var rec record
		if ok, err := readJSON(filepath.Join(meta, e.Name()), &rec); err != nil || !ok {
			if err != nil { // a corrupt record: listings read it, and report it
				ix.entries[name] = lifeEntry{Size: -1}
			}
			continue
		}
		l := driver.LifetimeOf(rec.Metadata)
		if l == (driver.Lifetime{}) && (rec.Prev == nil || driver.LifetimeOf(rec.Prev.Metadata) == (driver.Lifetime{})) {
			continue
		}
		ix.entries[name] = lifeEntry{Expires: l.Expires, Pinned: l.Pinned, Size: -1}
	}
	return ix, nil
}

// backdate sets the modification time of the staged file tmp (whose stat
// is fi) one microsecond back, so that it is older than that of the index
// file written after it (see the racy-git rule in read.go, beside the
// lifetime index), and returns its new stat.
func backdate(tmp string, fi fs.FileInfo) (fs.FileInfo, error) {
	if err := os.Chtimes(tmp, time.Time{}, fi.ModTime().Add(-time.Microsecond)); err != nil {
		return nil, err
	}
	return os.Stat(tmp)
}

// noteLifetime puts the entry of path before its record changes, when the
// new record keeps a lifetime: l, its own, or kept, its previous state's;
// staged is the stat of the content about to be renamed into place (nil
// for a tombstone). The caller holds the exclusive lock.
func (d *Driver) noteLifetime(p string, l, kept driver.Lifetime, staged fs.FileInfo) error {
	if l == (driver.Lifetime{}) && kept == (driver.Lifetime{}) {
		return nil // dropLifetime removes any entry once the change is in place
	}
	dir, name := splitDir(p)
	ix, err := d.loadToWrite(dir)
	if err != nil {
		return err
	}
	e := lifeEntry{Expires: l.Expires, Pinned: l.Pinned, Size: -1}
	if staged != nil {
		e.Size, e.MTime, e.Ino = staged.Size(), staged.ModTime().UnixNano(), inode(staged)
	}
	if ix.entries == nil {
		ix.entries = map[string]lifeEntry{}
	}
	ix.entries[name] = e
	return d.saveLifetimes(dir, ix, name)
}

// dropLifetime removes the entry of path, if any, once its record (now
// without any lifetime) or its deletion is in place. The caller holds the
// exclusive lock.
func (d *Driver) dropLifetime(p string) error {
	dir, name := splitDir(p)
	ix, err := d.loadToWrite(dir)
	if err != nil {
		return err
	}
	if _, ok := ix.entries[name]; !ok && !ix.corrupt {
		return nil
	}
	delete(ix.entries, name)
	return d.saveLifetimes(dir, ix, name)
}

// saveLifetimes writes the index of folder dir (removing it, and the
// folders it leaves empty, when it holds nothing), changed for the file
// changed. Then it reads each other file whose fingerprint the old index
// file left unchecked but the new one trusts (the racy-git rule, in
// read.go) and clears the fingerprint of any whose content changed in
// place, writing again if it cleared any. The caller holds the exclusive
// lock.
func (d *Driver) saveLifetimes(dir string, ix lifetimeIndex, changed string) error {
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
	before := ix.mtime
	for {
		if err := writeAtomic(name, formatLifetimes(ix.entries)); err != nil {
			return err
		}
		fi, err := os.Stat(name)
		if err != nil {
			return err
		}
		now := fi.ModTime().UnixNano()
		cleared := false
		for n, e := range ix.entries {
			if n == changed || e.Size < 0 || e.MTime < before || e.MTime >= now {
				continue // checked already, or still checked at every listing
			}
			if d.changedInPlace(path.Join(dir, n), e) {
				e.Size, e.MTime, e.Ino = -1, 0, 0
				ix.entries[n] = e
				cleared = true
			}
		}
		if !cleared {
			return nil
		}
		before = now
	}
}

// changedInPlace reports whether the file p still matches fingerprint e
// but no longer holds the content its record wrote. Any doubt (an
// unreadable record or file) counts as changed: the listing then reads
// the file, and reports what it finds.
func (d *Driver) changedInPlace(p string, e lifeEntry) bool {
	real, err := d.target(p)
	if err != nil {
		return true
	}
	fi, err := os.Stat(real)
	if err != nil || !e.matches(fi) {
		return false // the listing reads it anyway
	}
	content, err := os.ReadFile(real)
	if err != nil {
		return true
	}
	var rec record
	ok, err := readJSON(d.recordPath(p), &rec)
	return err != nil || !ok || rec.Tombstone || rec.Hash != hashOf(content)
}
