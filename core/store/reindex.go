// Reindex: rebuilding the search index of the files under a prefix.

package store

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/chunk"
)

// ReindexStats counts what [Store.Reindex] did.
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

// Reindex brings the search index of every file under prefix up to date
// with the store's embedder, one file at a time: after a model change
// every chunk is embedded again (in batches of at most 64 texts), after
// changes behind the store's back only the changed chunks, and a file
// whose record was made from its version by this model is skipped. So it
// is resumable: after an interruption (ctx done, a failed embedding), a
// rerun redoes nothing that is current. It holds one file's chunks at a
// time, whatever the prefix holds. The term index of the folders under
// prefix, in memory and persisted ([TermSegment]), is erased first (also
// when Reindex then refuses for want of an embedder) and built again from
// the files by each folder's next search. Index rows of files deleted behind the
// store's back are left to [Store.ForgetIndex].
//
// Errors: [ErrInvalidSearchMode] without an embedder, ErrInvalidPath for
// a bad prefix, the embedder's or the backend's error (with the stats of
// the work done before it), ctx's error.
func (s *Store) Reindex(ctx context.Context, prefix string) (ReindexStats, error) {
	return s.search.Reindex(ctx, prefix)
}

// Reindex is [Store.Reindex].
func (s *engine) Reindex(ctx context.Context, prefix string) (ReindexStats, error) {
	var st ReindexStats
	if err := s.usable(ctx); err != nil {
		return st, err
	}
	if s.terms != nil && ValidatePrefix(prefix) == nil {
		// Built again, from the store, by the next search; the persisted
		// term index too (with or without an embedder).
		s.vecs.forget(prefix)
		unlock, err := s.terms.forget(ctx, prefix)
		if err != nil {
			return st, err
		}
		_, err = s.eraseRows(ctx, prefix, isTermRow)
		unlock()
		if err != nil {
			return st, err
		}
	}
	if s.embedder == nil {
		return st, fmt.Errorf("%w: reindexing needs an embedder (store.Options.Embedder, or embedder= in the store URL)", ErrInvalidSearchMode)
	}
	if err := ValidatePrefix(prefix); err != nil {
		return st, err
	}
	for p, err := range s.Walk(ctx, prefix, 0) {
		if err != nil {
			return st, err
		}
		st.Files++
		if err := s.reindexPath(ctx, p, &st); err != nil {
			return st, fmt.Errorf("agentmem: reindexing %s: %w", p, err)
		}
	}
	return st, nil
}

// reindexPath indexes p now: it embeds the chunks that the record lacks
// under the store's model and hands them, with what it read, to
// indexRecord, which writes the record (so every record is written by one
// piece of code).
func (s *engine) reindexPath(ctx context.Context, p string, st *ReindexStats) error {
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
