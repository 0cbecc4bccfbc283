package memstore

import (
	"context"

	"github.com/agentmem/agentmem/core/driver"
)

// ChecksCollisions implements driver.CollisionChecker: Mutate refuses a
// colliding create under its lock.
func (d *Driver) ChecksCollisions() bool { return true }

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
