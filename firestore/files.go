package firestore

import (
	"context"
	"errors"
	"strings"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/agentmem/agentmem/core/driver"
)

// getFile reads the file row at path with its snapshot, or nils when
// there is none.
func (d *Driver) getFile(ctx context.Context, path string) (*driver.File, *firestore.DocumentSnapshot, error) {
	if !storable(path) {
		return nil, nil, nil // no such row can exist
	}
	s, err := d.fileRef(path).Get(ctx)
	if notFound(err) {
		d.forget(path)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fail(ctx, "get file", err)
	}
	f, err := decodeFile(s)
	if err != nil {
		return nil, nil, err
	}
	d.saw(f, s)
	return f, s, nil
}

// GetFile implements driver.Driver with one document read.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	f, _, err := d.getFile(ctx, path)
	return f, err
}

// CreateFile implements driver.Driver with one Create (an exists=false
// precondition). On ALREADY_EXISTS it re-reads: a row carrying f.Version is
// this call's own write, re-sent by the client after a lost reply.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	data, err := d.fileData(f)
	if err != nil {
		return err
	}
	return create(ctx, "create file", d.fileRef(f.Path), data, func() (bool, error) {
		cur, _, err := d.getFile(ctx, f.Path)
		return cur != nil && cur.Version == f.Version, err
	})
}

// ReplaceFile implements driver.Driver: it reads the row and, when its
// version is expected, replaces it with an update-time precondition (two
// RPCs, no locks). If the precondition fails the row changed after the
// read: the next read finds either f.Version (this call's write, re-sent
// by the client after a lost reply) or another version.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	u, err := d.fileFields(f)
	if err != nil {
		return err
	}
	return guarded(ctx, "replace file", func(retried bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getFile(ctx, f.Path)
		switch {
		case err != nil:
			return 0, nil, err
		case retried && cur != nil && cur.Version == f.Version:
			return done, nil, nil
		case cur == nil || cur.Version != expected:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, updateAt(ctx, u))
}

// DeleteFile implements driver.Driver: it reads the row and, when its
// version is expected, deletes it with an update-time precondition. A
// failed precondition followed by a missing row is reported as an unknown
// outcome, not ErrPrecondition: the client may have re-sent a delete that
// had landed, and a delete leaves no evidence.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	return guarded(ctx, "delete file", func(retried bool) (verdict, *firestore.DocumentSnapshot, error) {
		cur, snap, err := d.getFile(ctx, path)
		switch {
		case err != nil:
			return 0, nil, err
		case retried && cur == nil:
			return unsure, nil, nil
		case cur == nil || cur.Version != expected:
			return refused, nil, nil
		}
		return proceed, snap, nil
	}, deleteAt(ctx))
}

// rangeQuery selects file rows with prefix whose path is ≥ from
// (> from when exclusive), ordered by path. Only documents with a path
// field match, so receipts never do; the single-field index on path that
// Firestore keeps automatically serves it.
func (d *Driver) rangeQuery(prefix, from string, exclusive bool) firestore.Query {
	op := ">="
	if exclusive {
		op = ">"
	}
	q := d.coll.Where(fPath, op, from)
	if end, ok := driver.PrefixEnd(prefix); ok {
		q = q.Where(fPath, "<", end)
	}
	return q.OrderBy(fPath, firestore.Asc)
}

// ListFiles implements driver.Driver with one query that returns only the
// path and tombstone fields. Tombstones are returned flagged.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	if !storable(p.Prefix) {
		return nil, nil // every path under it is too long to be stored (or queried)
	}
	q := d.rangeQuery(p.Prefix, p.Prefix, false)
	if p.After >= p.Prefix && p.After != "" {
		q = d.rangeQuery(p.Prefix, p.After, true)
	}
	it := q.Select(fPath, fTombstone).Limit(p.Limit).Documents(ctx)
	defer it.Stop()
	var out []driver.Entry
	for {
		s, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fail(ctx, "list files", err)
		}
		m := s.Data()
		out = append(out, driver.Entry{Path: getString(m, fPath), Tombstone: getBool(m, fTombstone)})
	}
}

// GetFiles implements driver.BatchGetter with one BatchGetDocuments call.
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	refs := make([]*firestore.DocumentRef, 0, len(paths))
	for _, p := range paths {
		if storable(p) {
			refs = append(refs, d.fileRef(p))
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	snaps, err := d.client.GetAll(ctx, refs)
	if err != nil {
		return nil, fail(ctx, "get files", err)
	}
	out := make([]*driver.File, 0, len(snaps))
	for _, s := range snaps {
		if !s.Exists() {
			continue
		}
		f, err := decodeFile(s)
		if err != nil {
			return nil, err
		}
		d.saw(f, s)
		out = append(out, f)
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader: one range query on path for the
// first p.Limit rows of the scope. Nested paths and tombstones are dropped
// here, so when they took room the driver asks for another page, starting
// after the last row seen, or past the whole subfolder when that row was
// nested (a subfolder's paths sort together, as "/" is one byte).
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	var out []driver.ScopeFile
	from, exclusive := p.Prefix, false
	for len(out) < p.Limit {
		need := p.Limit - len(out)
		docs, err := d.rangeQuery(p.Prefix, from, exclusive).Limit(need).Documents(ctx).GetAll()
		if err != nil {
			return nil, fail(ctx, "read scope", err)
		}
		var last, sub string
		for _, s := range docs {
			f, err := decodeFile(s)
			if err != nil {
				return nil, err
			}
			last, sub = f.Path, ""
			rest := strings.TrimPrefix(f.Path, p.Prefix)
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				sub = p.Prefix + rest[:i+1]
				continue
			}
			if f.Tombstone {
				continue
			}
			content, cut := driver.CutRunes(f.Content, p.MaxChars)
			out = append(out, driver.ScopeFile{Path: f.Path, Content: content, Truncated: cut})
		}
		if len(docs) < need {
			break
		}
		from, exclusive = last, true
		if end, ok := driver.PrefixEnd(sub); ok {
			from, exclusive = end, false
		}
	}
	return out, nil
}
