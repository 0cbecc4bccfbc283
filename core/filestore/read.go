package filestore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentmem/agentmem/core/driver"
)

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

// GetFiles implements driver.BatchGetter: every path under one shared
// lock, each read as GetFile reads it.
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := make([]*driver.File, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, _, err := d.state(p)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader: under one shared lock, one
// read of the scope's folder (its names, sorted) and a bounded read of
// each file directly in it (at most 4 bytes per rune of p.MaxChars, plus
// one rune), as ListFiles would list them: no temporary files, no
// folders, no links that leave the directory, no symlinked scope.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	dirRel := strings.TrimSuffix(p.Prefix, "/")
	dir := filepath.Join(d.root, filepath.FromSlash(dirRel))
	if dirRel != "" {
		if err := reserved(dirRel); err != nil {
			return nil, nil
		}
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if real != dir {
			return nil, nil // a symlinked scope is never followed
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []driver.ScopeFile
	for _, e := range entries { // sorted by name, so by path
		if len(out) == p.Limit {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		rel := p.Prefix + name
		if e.IsDir() || name == SidecarDir || !Listed(rel) {
			continue
		}
		real := filepath.Join(dir, name)
		switch {
		case e.Type().IsRegular():
		case e.Type()&fs.ModeSymlink != 0:
			if real, err = d.target(rel); err != nil {
				continue // escaping links are never read
			}
			if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
				continue
			}
		default:
			continue
		}
		content, cut, err := readPrefix(real, p.MaxChars)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f := driver.ScopeFile{Path: rel, Content: content, Truncated: cut}
		if !cut { // a whole file: its version, as GetFile tells it
			var rec record
			ok, err := readJSON(d.recordPath(rel), &rec)
			if err != nil {
				return nil, err
			}
			if r := written(&rec, hashOf([]byte(content))); ok && r != nil {
				f.Version = r.Version
			} else {
				f.Version = "ext-" + hashOf([]byte(content))[:32]
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// readPrefix reads at most maxChars runes of the file at name: never more
// than 4×maxChars+4 bytes, which hold more than maxChars runes when the
// file is longer.
func readPrefix(name string, maxChars int) (string, bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(maxChars)*4+4))
	if err != nil {
		return "", false, err
	}
	s, cut := driver.CutRunes(string(b), maxChars)
	return s, cut, nil
}
