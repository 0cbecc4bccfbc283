package main

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/agentmem/agentmem/core/store"
)

// sameFile reports whether f holds content, metadata md (nil and empty
// metadata are the same) and lifetime l.
func sameFile(f *store.File, content string, md map[string]string, l lifetime) bool {
	return f.Content == content && len(f.Metadata) == len(md) && maps.Equal(f.Metadata, md) && lifetimeOf(f).equal(l)
}

// putOutcome is what put did.
type putOutcome int

const (
	putCreated putOutcome = iota
	putReplaced
	putUnchanged
	putDiffers
)

// put makes p hold content, md and lifetime l. It first tries to create p: one request
// when p is absent, the usual case of a first import or migration. If p
// exists, it reads it, leaves an identical file alone and replaces a
// different one only when replace is set (compare-and-swap on the version
// it read); otherwise it reports putDiffers.
func (a *app) put(ctx context.Context, s *store.Store, p, content string, md map[string]string, l lifetime, replace bool) (putOutcome, error) {
	err := a.writeCAS(ctx, s, l.request(store.WriteRequest{Path: p, Content: content, Metadata: md}))
	if err == nil {
		return putCreated, nil
	}
	if !errors.Is(err, store.ErrConflict) {
		return 0, err
	}
	cur, err := a.readFile(ctx, s, p)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, changedMeanwhile(p, err) // deleted since the create failed
	case err != nil:
		return 0, err
	case sameFile(cur, content, md, l):
		return putUnchanged, nil
	case !replace:
		return putDiffers, nil
	}
	if err := a.writeCAS(ctx, s, l.request(store.WriteRequest{Path: p, Content: content, Metadata: md, Expected: cur.Version})); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return 0, changedMeanwhile(p, err)
		}
		return 0, err
	}
	return putReplaced, nil
}

// writeCAS writes r (a compare-and-swap on r.Expected), bounded by
// --timeout; a conflict is returned as the store's ErrConflict.
func (a *app) writeCAS(ctx context.Context, s *store.Store, r store.WriteRequest) error {
	wctx, cancel := a.request(ctx)
	defer cancel()
	_, err := s.Write(wctx, r)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fileErr(r.Path, deadline(err, a.timeout))
	}
	return err
}

// changedMeanwhile explains a conflict of a file written concurrently.
func changedMeanwhile(p string, err error) error {
	return fmt.Errorf("%s changed while it was being written; nothing was written to it: run the command again: %w", p, err)
}
