package firestore

import (
	"context"
	"strings"

	"cloud.google.com/go/firestore"

	"github.com/agentmem/agentmem/core/driver"
)

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
// nested (a subfolder's paths sort together, as "/" is one byte). Each
// file's Lifetime comes from the metadata of the row the query returned.
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
			out = append(out, driver.ScopeFile{Path: f.Path, Content: content, Truncated: cut, Version: f.Version, Lifetime: driver.LifetimeOf(f.Metadata)})
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
