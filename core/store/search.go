// Search, as the store offers it: the methods that validate a call and hand
// it to the search engine (core/search), and the engine's view of the
// store (searchHost).

package store

import (
	"context"
	"fmt"
	"iter"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
)

// Search runs a bounded search over the files directly under r.Prefix
// (every folder under it with r.Recursive; see [search.Request.Recursive])
// and returns the best matches first (by score, then path); the names and
// snippets of all matches together fit in r.MaxChars runes, shared among
// them. r.Mode picks the ranking: BM25 by default, or the reference
// notebook's literal term counts ([search.Literal]); see [search.Mode].
//
// r.Prefix is a plain string prefix, as for ListPaths, narrowed to one
// folder: the files searched are those whose path starts with r.Prefix and
// has no "/" after it ("notes/p05" searches notes/p05.md and notes/p05x.md,
// not notes/p05/a.md).
//
// An empty query returns an empty result. In BM25 mode a query with no
// word at all (only punctuation, say) is scored literally instead. It
// fails with ErrInvalidPath for a bad prefix, ErrInvalidBound when Limit,
// MaxFiles, MaxChars or MaxFileChars is not positive or RecencyHalfLife
// is negative, and ErrInvalidSearchMode for an unknown Mode. A request
// with no RecencyHalfLife takes the store's (Options.SearchRecencyHalfLife).
func (s *Store) Search(ctx context.Context, r search.Request) (res search.Result, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpSearch})
	defer func() { o.done(err, false, len(res.Matches)) }()
	if err := s.usable(ctx); err != nil {
		return search.Result{}, err
	}
	if err := ValidatePrefix(r.Prefix); err != nil {
		return search.Result{}, err
	}
	for _, b := range []struct {
		name string
		n    int
	}{{"limit", r.Limit}, {"max_files", r.MaxFiles}, {"max_chars", r.MaxChars}, {"max_file_chars", r.MaxFileChars}} {
		if b.n <= 0 {
			return search.Result{}, fmt.Errorf("%w: %s must be positive, got %d", ErrInvalidBound, b.name, b.n)
		}
	}
	if r.RecencyHalfLife < 0 {
		return search.Result{}, fmt.Errorf("%w: recency_half_life must not be negative (0 turns recency off), got %s", ErrInvalidBound, r.RecencyHalfLife)
	}
	if r.RecencyHalfLife == 0 {
		r.RecencyHalfLife = s.recency // the store's default (Options.SearchRecencyHalfLife, ?recency=)
	}
	if !r.Mode.Valid() {
		return search.Result{}, fmt.Errorf("%w, got %q", ErrInvalidSearchMode, r.Mode)
	}
	if r.Mode == search.Hybrid && s.search.Embedder() == nil {
		return search.Result{}, fmt.Errorf("%w: hybrid search needs an embedder (store.Options.Embedder, or embedder= in the store URL)", ErrInvalidSearchMode)
	}
	return s.search.Search(ctx, r)
}

// WaitIndexed blocks until the background indexer has nothing queued or
// running (retries scheduled for later do not count), or has stopped
// ([Store.Shutdown], [Store.Close]), or ctx is done (ctx's error); while
// it waits, queued paths are indexed without resting (see indexQuiet).
// Without an embedder it returns at once. Tests and commands that exit
// after writing use it; searches never need it (a search embeds, within
// its bounds, what the index lacks).
func (s *Store) WaitIndexed(ctx context.Context) error { return s.search.WaitIndexed(ctx) }

// ForgetIndex erases the search index rows under prefix (a namespace,
// "kamal/"): those of deleted files that a delete behind the store's back
// left, and those of files that still exist (a search or write indexes them
// again). It returns how many rows it removed. Deleting a file through the
// store erases its rows by itself; a command that forgets a namespace calls
// this after deleting its files. Errors: ErrInvalidPath for an empty or bad
// prefix, or the backend's error.
func (s *Store) ForgetIndex(ctx context.Context, prefix string) (int, error) {
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	if prefix == "" {
		return 0, ErrInvalidPath
	}
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	return s.search.ForgetIndex(ctx, prefix)
}

// Reindex brings the search index of every file under prefix up to date
// with the store's embedder, one file at a time: after a model change
// every chunk is embedded again (in batches of at most 64 texts), after
// changes behind the store's back only the changed chunks, and a file
// whose record was made from its version by this model is skipped. So it
// is resumable: after an interruption (ctx done, a failed embedding), a
// rerun redoes nothing that is current. It holds one file's chunks at a
// time, whatever the prefix holds. The term index of the folders under
// prefix, in memory and persisted ([search.TermSegment]), is erased first (also
// when Reindex then refuses for want of an embedder) and built again from
// the files by each folder's next search. Index rows of files deleted behind the
// store's back are left to [Store.ForgetIndex].
//
// Errors: [ErrInvalidSearchMode] without an embedder, ErrInvalidPath for
// a bad prefix, the embedder's or the backend's error (with the stats of
// the work done before it), ctx's error.
func (s *Store) Reindex(ctx context.Context, prefix string) (search.ReindexStats, error) {
	if err := s.usable(ctx); err != nil {
		return search.ReindexStats{}, err
	}
	perr := ValidatePrefix(prefix)
	if perr == nil {
		// Built again, from the store, by the next search; the persisted
		// term index too (with or without an embedder).
		if err := s.search.ForgetTerms(ctx, prefix); err != nil {
			return search.ReindexStats{}, err
		}
	}
	if s.search.Embedder() == nil {
		return search.ReindexStats{}, fmt.Errorf("%w: reindexing needs an embedder (store.Options.Embedder, or embedder= in the store URL)", ErrInvalidSearchMode)
	}
	if perr != nil {
		return search.ReindexStats{}, perr
	}
	return s.search.Reindex(ctx, prefix)
}

// searchHost is the store as its search engine sees it (search.Host).
type searchHost struct{ s *Store }

func (h searchHost) Usable(ctx context.Context) error { return h.s.usable(ctx) }

// GetFiles leaves expired files out, as if they were deleted.
func (h searchHost) GetFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	rows, err := h.s.getFiles(ctx, paths)
	for p, f := range rows {
		if f != nil && !f.Tombstone && h.s.expired(driver.LifetimeOf(f.Metadata)) {
			delete(rows, p)
		}
	}
	return rows, err
}

func (h searchHost) List(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	return h.s.list(ctx, prefix, limit, direct)
}

// Walk pages through the store's listing as Walk does, but as part of the
// engine's own operation (OpSearch, OpIndex): not observed as an OpWalk.
func (h searchHost) Walk(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := h.s.walk(ctx, prefix, DefaultWalkPageSize, func(p string) bool { return yield(p, nil) }); err != nil {
			yield("", err)
		}
	}
}

func (h searchHost) Warn(ctx context.Context, msg, path string, err error) {
	h.s.warn(ctx, msg, "", path, err)
}

func (h searchHost) Observe(ctx context.Context, op string) (context.Context, func(err error, n int)) {
	ctx, o := h.s.observe(ctx, OperationInfo{Op: Op(op)})
	return ctx, func(err error, n int) { o.done(err, false, n) }
}
