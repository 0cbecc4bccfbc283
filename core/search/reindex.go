// Reindex: rebuilding the search index of the files under a prefix.

package search

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
)

// ReindexStats counts what store.Store.Reindex did.
type ReindexStats struct {
	// Files is how many files under the prefix it visited.
	Files int
	// Current is how many of them had an index record already made from
	// their version by the store's model: nothing was read further,
	// embedded or written.
	Current int
	// Indexed is how many records it wrote (or found rewritten meanwhile).
	Indexed int
	// Embedded is how many chunks it embedded.
	Embedded int
	// Reused is how many chunks of the records it wrote kept the vector
	// the old record held (same model, same chunk hash).
	Reused int
}

// ForgetTerms erases the term index of the folders under prefix, in
// memory and persisted (TermSegment), and the vector cache's: each
// folder's next search builds them again from its files.
func (s *Engine) ForgetTerms(ctx context.Context, prefix string) error {
	if s.terms == nil {
		return nil
	}
	s.vecs.forget(prefix)
	unlock, err := s.terms.forget(ctx, prefix)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = s.eraseRows(ctx, prefix, isTermRow)
	return err
}

// Reindex embeds again, where their records are not current, the files
// under prefix, a valid prefix the store has checked, on an Engine with
// an embedder (see store.Store.Reindex).
func (s *Engine) Reindex(ctx context.Context, prefix string) (ReindexStats, error) {
	var st ReindexStats
	for p, err := range s.h.Walk(ctx, prefix) {
		if err != nil {
			return st, err
		}
		st.Files++
		if err := s.reindexPath(ctx, p, &st); err != nil {
			return st, fmt.Errorf("search: reindexing %s: %w", p, err)
		}
	}
	return st, nil
}

// reindexPath indexes p now: it embeds the chunks that the record lacks
// under the store's model and hands them, with what it read, to
// indexRecord, which writes the record (so every record is written by one
// piece of code).
func (s *Engine) reindexPath(ctx context.Context, p string, st *ReindexStats) error {
	in, err := s.readIndex(ctx, p)
	if err != nil {
		return err
	}
	f, old := in.f, in.old
	if f == nil || f.Tombstone {
		return nil // deleted since the walk: its delete erases the record
	}
	model := s.embedder.Model()
	if old != nil && old.File == f.Version && old.Model == model {
		st.Current++
		return nil
	}
	known := map[string]bool{}
	if old != nil && old.Model == model {
		for _, c := range old.Chunks {
			if c.zero() || c.vector(old.Dims) != nil {
				known[c.Hash] = true
			}
		}
	}
	hints := map[string][]float32{}
	var texts, hashes []string
	seen := map[string]bool{}
	for _, c := range chunk.Split(path.Base(p), f.Content) {
		switch {
		case seen[c.Hash]:
		case known[c.Hash]:
			st.Reused++
		default:
			texts, hashes = append(texts, c.Text), append(hashes, c.Hash)
		}
		seen[c.Hash] = true
	}
	for len(texts) > 0 {
		n := min(len(texts), embedBatch)
		vs, err := embedChecked(ctx, s.embedder, texts[:n])
		if err != nil {
			return err
		}
		st.Embedded += n
		for i, v := range vs {
			if v == nil {
				v = zeroVec // known zero: recorded, never scored
			}
			hints[hashes[i]] = v
		}
		texts, hashes = texts[n:], hashes[n:]
	}
	err = s.indexRecord(ctx, p, in, hints)
	if errors.Is(err, driver.ErrPrecondition) {
		// Another indexer wrote the record between indexPath's reads and
		// its write: read it again, once (as the background worker does).
		err = s.indexPath(ctx, p, hints)
	}
	if err != nil {
		return err
	}
	st.Indexed++
	return nil
}
