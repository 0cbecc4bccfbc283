// The indexer's records: reading a file's index record, making it again
// from the file's chunks, writing it, and erasing records.

package search

import (
	"context"
	"errors"
	"path"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

// indexRead is what indexing a path reads: the file, its index record
// (every part's chunks merged into old) and the record's rows as read, the
// conditions of the record's write.
type indexRead struct {
	f    *driver.File
	old  *record
	rows []*driver.File
}

// readIndex reads p's index record, then p. The record before the file: a
// record written by another indexer after this read was made from a file
// read after it, and our conditional write over the version read here
// then fails.
func (s *Engine) readIndex(ctx context.Context, p string) (*indexRead, error) {
	first, err := s.d.GetFile(ctx, indexPath(p, 1))
	if err != nil {
		return nil, err
	}
	f, err := s.d.GetFile(ctx, p)
	if err != nil {
		return nil, err
	}
	in := &indexRead{f: f}
	if first != nil && !first.Tombstone {
		in.rows = append(in.rows, first)
		if in.old = decodeRecord(first.Content); in.old != nil && in.old.Parts > 1 {
			for k := 2; k <= in.old.Parts; k++ {
				r, err := s.d.GetFile(ctx, indexPath(p, k))
				if err != nil {
					return nil, err
				}
				in.rows = append(in.rows, r)
				if r != nil && !r.Tombstone {
					if rec := decodeRecord(r.Content); rec != nil && rec.Model == in.old.Model && rec.Dims == in.old.Dims {
						in.old.Chunks = append(in.old.Chunks, rec.Chunks...)
					}
				}
			}
		}
	}
	return in, nil
}

// indexPath brings the index record of p up to date with the file: it
// erases the record of an absent file, and otherwise embeds the chunks
// whose hash the record lacks (none for an unchanged rewrite) and writes
// the record when its chunks changed.
func (s *Engine) indexPath(ctx context.Context, p string, hints map[string][]float32) error {
	in, err := s.readIndex(ctx, p)
	if err != nil {
		return err
	}
	return s.indexRecord(ctx, p, in, hints)
}

// indexRecord is indexPath over what readIndex read.
func (s *Engine) indexRecord(ctx context.Context, p string, in *indexRead, hints map[string][]float32) error {
	f, old, rows := in.f, in.old, in.rows
	if f == nil || f.Tombstone {
		return s.writeRecord(ctx, p, nil, rows)
	}
	model := s.embedder.Model()
	if old != nil && old.File == f.Version && old.Model == model {
		return nil
	}
	known := map[string][]float32{}
	dims := 0
	if old != nil && old.Model == model {
		dims = old.Dims
		for _, c := range old.Chunks {
			if c.zero() {
				known[c.Hash] = zeroVec
			} else if v := c.vector(old.Dims); v != nil {
				known[c.Hash] = v
			}
		}
	}
	chunks := chunk.Split(path.Base(p), f.Content)
	var missing []int
	for i, c := range chunks {
		if _, ok := known[c.Hash]; ok {
			continue
		}
		if v, ok := hints[c.Hash]; ok && len(v) == 0 {
			known[c.Hash] = zeroVec
			continue
		}
		if v, ok := hints[c.Hash]; ok && (dims == 0 || len(v) == dims) {
			known[c.Hash], dims = v, len(v)
			continue
		}
		missing = append(missing, i)
	}
	unchanged := old != nil && old.Model == model && len(missing) == 0 && len(old.Chunks) == len(chunks)
	if unchanged {
		for i, c := range chunks {
			if old.Chunks[i].Hash != c.Hash || old.Chunks[i].Start != c.Start || old.Chunks[i].End != c.End {
				unchanged = false
				break
			}
		}
	}
	if unchanged {
		return nil // an unchanged rewrite: nothing to embed, nothing to write
	}
	for len(missing) > 0 {
		batch := missing[:min(len(missing), embedBatch)]
		missing = missing[len(batch):]
		texts := make([]string, len(batch))
		for i, ci := range batch {
			texts[i] = chunks[ci].Text
		}
		vs, err := embedDetached(ctx, s.embedder, texts)
		if err != nil {
			return err
		}
		for i, ci := range batch {
			if len(vs[i]) == 0 {
				known[chunks[ci].Hash] = zeroVec // no known word: recorded, never scored
				continue
			}
			if dims != 0 && len(vs[i]) != dims {
				// The model's vectors changed length: start over (a known
				// zero stays zero).
				for h, v := range known {
					if len(v) != 0 {
						delete(known, h)
					}
				}
			}
			dims = len(vs[i])
			known[chunks[ci].Hash] = vs[i]
		}
	}
	rec := record{Format: 1, File: f.Version, Model: model, Dims: dims}
	for _, c := range chunks {
		v, ok := known[c.Hash]
		if ok && len(v) == 0 {
			rec.Chunks = append(rec.Chunks, recChunk{Hash: c.Hash, Start: c.Start, End: c.End}) // known zero
			continue
		}
		if !ok || len(v) != dims {
			continue
		}
		scale, q := quantize(v)
		rec.Chunks = append(rec.Chunks, recChunk{Hash: c.Hash, Start: c.Start, End: c.End, Scale: scale, Q: q})
	}
	return s.writeRecord(ctx, p, &rec, rows)
}

// embedDetached is embedChecked returning when ctx is done, even if the
// embedder does not: a Shutdown that gave up or a Close does not wait for an
// embedder that hangs (its call is left to end on its own).
func embedDetached(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	type answer struct {
		vs  [][]float32
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		vs, err := embedChecked(ctx, e, texts)
		ch <- answer{vs, err}
	}()
	select {
	case a := <-ch:
		return a.vs, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// writeRecord replaces the record parts rows (as read; nil entries are
// absent parts) with rec's parts, or erases them when rec is nil. Each row
// is one conditional primitive on its version.
func (s *Engine) writeRecord(ctx context.Context, p string, rec *record, rows []*driver.File) error {
	defer func() { s.vecs.recorded(p, rec) }() // a failed write leaves the cache as a read of the rows would
	var parts []string
	if rec != nil {
		var err error
		if parts, err = encodeRecord(*rec); err != nil {
			return err
		}
	}
	for k := 1; k <= max(len(parts), len(rows)); k++ {
		var row *driver.File
		if k <= len(rows) {
			row = rows[k-1]
		}
		if row != nil && row.Tombstone {
			row = nil
		}
		at := indexPath(p, k)
		switch {
		case k > len(parts):
			if row != nil {
				if err := s.d.DeleteFile(ctx, at, row.Version); err != nil && !errors.Is(err, driver.ErrPrecondition) {
					return err
				}
			}
		case row == nil:
			if err := s.d.CreateFile(ctx, driver.File{Path: at, Content: parts[k-1], Version: ulid.New(s.now())}); err != nil {
				return err
			}
		default:
			if row.Content == parts[k-1] {
				continue
			}
			if err := s.d.ReplaceFile(ctx, driver.File{Path: at, Content: parts[k-1], Version: ulid.New(s.now())}, row.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForgetIndex erases the index rows under prefix, a valid prefix the
// store has checked (see store.Store.ForgetIndex), and returns how many
// it removed.
func (s *Engine) ForgetIndex(ctx context.Context, prefix string) (n int, err error) {
	// The caches first, so that nothing writes rows again behind the
	// erasure (the term index holds the files' words too).
	s.vecs.forget(prefix)
	if s.terms != nil {
		unlock, err := s.terms.forget(ctx, prefix)
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	return s.eraseRows(ctx, prefix, func(p string) bool { return isIndexRow(p) || isTermRow(p) })
}

// deleteRow deletes the derived row at p at the version it has now; it
// reports false when there is none, or it was rewritten or removed
// meanwhile (another pass removes it).
func (s *Engine) deleteRow(ctx context.Context, p string) (bool, error) {
	f, err := s.d.GetFile(ctx, p)
	if err != nil || f == nil {
		return false, err
	}
	if err := s.d.DeleteFile(ctx, p, f.Version); err != nil {
		if errors.Is(err, driver.ErrPrecondition) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// eraseRows deletes the derived rows under prefix that match selects,
// and returns how many.
func (s *Engine) eraseRows(ctx context.Context, prefix string, match func(string) bool) (n int, err error) {
	after := ""
	for {
		entries, err := s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: pageSize})
		if err != nil {
			return n, err
		}
		for _, e := range entries {
			after = max(after, e.Path)
			if !match(e.Path) || e.Tombstone {
				continue
			}
			deleted, err := s.deleteRow(ctx, e.Path)
			if err != nil {
				return n, err
			}
			if deleted {
				n++
			}
		}
		if len(entries) < pageSize {
			return n, nil
		}
	}
}
