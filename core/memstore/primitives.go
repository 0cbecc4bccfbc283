package memstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
)

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
		out = append(out, driver.Entry{Path: path, Tombstone: d.files[path].Tombstone, Lifetime: driver.LifetimeOf(d.files[path].Metadata)})
	}
	return out
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
