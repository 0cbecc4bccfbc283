package memstore

import (
	"context"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
)

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
		out = append(out, driver.ScopeFile{Path: path, Content: content, Truncated: cut, Version: f.Version, Lifetime: driver.LifetimeOf(f.Metadata)})
	}
	return out, nil
}
