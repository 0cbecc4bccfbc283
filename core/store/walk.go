// Walk: every path under a prefix, page by page.

package store

import (
	"context"
	"fmt"
	"iter"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// Page sizes of [Store.Walk].
const (
	// DefaultWalkPageSize is the page size Walk uses for pageSize 0.
	DefaultWalkPageSize = 500
	// MaxWalkPageSize bounds the page size: larger requests are cut to it.
	MaxWalkPageSize = 5000
)

// Walk returns an iterator over every path that starts with prefix (a
// plain string prefix, as for [Store.ListPaths]: nested paths included,
// "a" also matches "ab/x"), in code-point order, without a limit. It asks
// the driver for one page of pageSize paths at a time (0 means
// [DefaultWalkPageSize]; more than [MaxWalkPageSize] is cut to it), each
// starting after the last path of the one before, so memory stays bounded
// however many files there are. Receipts, tombstones and the
// search index ([search.IndexSegment]) are never yielded. With
// [ListOptions].After the walk starts after that path: it resumes a walk
// whose last path was After.
//
// The walk is not a snapshot: a file written or deleted during the walk
// is yielded or not depending on whether its path is still ahead, but no
// path is yielded twice, none is yielded out of order, and a file that
// exists, unchanged, for the whole walk is always yielded.
//
// An error ends the walk: it is yielded once, with an empty path. That is
// ErrInvalidPath for a bad prefix or After, ErrInvalidBound for a negative
// pageSize, ErrNoDriver, ctx's error when ctx is done (checked before
// every page), or the backend's error.
//
//	for path, err := range s.Walk(ctx, "kamal/", 0) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(path)
//	}
func (s *Store) Walk(ctx context.Context, prefix string, pageSize int, opts ...ListOptions) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		ctx, yield, done := s.observeWalk(ctx, yield)
		defer done()
		if err := s.usable(ctx); err != nil {
			yield("", err)
			return
		}
		if err := ValidatePrefix(prefix); err != nil {
			yield("", err)
			return
		}
		after, err := listAfter(prefix, opts)
		if err != nil {
			yield("", err)
			return
		}
		switch {
		case pageSize < 0:
			yield("", fmt.Errorf("%w: page size must be positive or 0 for the default, got %d", ErrInvalidBound, pageSize))
			return
		case pageSize == 0:
			pageSize = DefaultWalkPageSize
		case pageSize > MaxWalkPageSize:
			pageSize = MaxWalkPageSize
		}
		if err := s.walkAfter(ctx, prefix, after, pageSize, func(p string) bool { return yield(p, nil) }); err != nil {
			yield("", err)
		}
	}
}

// walk calls fn with every file path under prefix in code-point order,
// listing pageSize at a time, until fn returns false; the store's derived
// rows and tombstones are skipped. It is Walk without validation or
// observation, for the store's own listings.
func (s *Store) walk(ctx context.Context, prefix string, pageSize int, fn func(string) bool) error {
	return s.walkAfter(ctx, prefix, "", pageSize, fn)
}

// walkAfter is walk from the path after on ("" = from the start).
func (s *Store) walkAfter(ctx context.Context, prefix, after string, pageSize int, fn func(string) bool) error {
	return s.walkRows(ctx, prefix, after, pageSize, false, func(e driver.Entry) bool { return fn(e.Path) })
}

// walkRows is walkAfter over the listed entries (each with its lifetime),
// with the files that have expired but are still stored when expired is
// set (what Forget erases, and the store's own expiry finds).
func (s *Store) walkRows(ctx context.Context, prefix, after string, pageSize int, expired bool, fn func(driver.Entry) bool) error {
	for {
		now := driver.FormatExpiry(s.now())
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: pageSize})
		if err != nil {
			return err
		}
		last := after
		for _, e := range entries {
			if e.Path <= after {
				continue // never backwards, never twice, whatever the driver does
			}
			after = e.Path
			if end, ok := rowpath.ReservedAt(e.Path); ok {
				after = end // the store's derived rows are never files
				continue
			}
			if e.Tombstone || (!expired && e.Lifetime.ExpiredBy(now)) {
				continue
			}
			if !fn(e) {
				return nil
			}
		}
		if len(entries) < pageSize {
			return nil
		}
		if after == last {
			return fmt.Errorf("agentmem: the driver returned a full page of paths none of which is after %q: fix its ListFiles", after)
		}
	}
}
