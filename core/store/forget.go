// Forget: erasing a namespace (a user's memory): its files, its history and
// its search index rows, in one method every surface calls.

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// ForgetOptions tunes [Store.Forget]. nil means defaults.
type ForgetOptions struct {
	// Confirm, when set, is called once the files are listed, before
	// anything is erased, with what Forget found; an error from it makes
	// Forget erase nothing and return that error unchanged. Setting it
	// costs one history read (ForgetFound.History). nil means no
	// confirmation.
	Confirm func(ctx context.Context, found ForgetFound) error
	// RequestTimeout bounds each request Forget makes: each file's read
	// and delete, the history's and the index's erasure. Zero means only
	// ctx bounds them.
	RequestTimeout time.Duration
}

// ForgetFound is what [Store.Forget] found to erase, as it tells
// ForgetOptions.Confirm.
type ForgetFound struct {
	// Prefix is the prefix being forgotten.
	Prefix string
	// Files counts the files listed under Prefix.
	Files int
	// History reports that changes under Prefix are recorded (false on a
	// backend that keeps no history).
	History bool
}

// ForgetStats is what [Store.Forget] erased.
type ForgetStats struct {
	// Deleted counts the files deleted.
	Deleted int
	// Kept counts the files that changed after they were listed and were
	// kept.
	Kept int
	// HistoryEntries counts the history entries erased (those of the
	// deletes just made included).
	HistoryEntries int
	// IndexRows counts the search index rows erased.
	IndexRows int
}

// Forget erases every file whose path starts with prefix, then every
// history entry under it ([Store.ForgetHistory], which the deletes just
// made are recorded in too), then its search index rows
// ([Store.ForgetIndex], those of files deleted behind the store's back
// included). prefix is a plain string prefix, as for ListPaths: give a
// namespace's folder with its slash ("kamal/", not "kamal", which matches
// "kamal-b/" too). An empty prefix is refused (ErrInvalidPath), so a typo
// never erases every user's memory.
//
// Each delete is a compare-and-swap on the version listed, so a file
// changed after the listing is kept and counted in Kept (and one created
// after it is not listed); then, once the rest is done, the error wraps
// ErrConflict: run Forget again.
//
// On another failure Forget stops, returns what it erased so far and an
// error saying where it stopped; running it again finishes the job.
//
// Errors: ErrInvalidPath, ErrConflict (files kept), the error of
// opts.Confirm, or the backend's error.
func (s *Store) Forget(ctx context.Context, prefix string, opts *ForgetOptions) (ForgetStats, error) {
	if err := s.usable(ctx); err != nil {
		return ForgetStats{}, err
	}
	if prefix == "" {
		return ForgetStats{}, fmt.Errorf("%w: forget needs a non-empty prefix", ErrInvalidPath)
	}
	if err := ValidatePrefix(prefix); err != nil {
		return ForgetStats{}, err
	}
	if opts == nil {
		opts = &ForgetOptions{}
	}
	call := func(f func(ctx context.Context) error) error {
		if opts.RequestTimeout <= 0 {
			return f(ctx)
		}
		rctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return f(rctx)
	}

	// Every file, those that have expired but are still stored too:
	// forget is not retention.
	type listed struct{ path, version string }
	var files []listed
	var paths []string
	if err := s.walkRows(ctx, prefix, "", DefaultWalkPageSize, true, func(e driver.Entry) bool { paths = append(paths, e.Path); return true }); err != nil {
		return ForgetStats{}, fmt.Errorf("agentmem: forget %q: listing its files: %w", prefix, err)
	}
	for _, p := range paths {
		var f *driver.File
		err := call(func(ctx context.Context) (err error) { f, err = s.d.GetFile(ctx, p); return err })
		if err != nil {
			return ForgetStats{}, fmt.Errorf("agentmem: forget %q: reading %q: %w", prefix, p, err)
		}
		if f == nil || f.Tombstone {
			continue
		}
		files = append(files, listed{p, f.Version})
	}
	if opts.Confirm != nil {
		found := ForgetFound{Prefix: prefix, Files: len(files)}
		err := call(func(ctx context.Context) error {
			page, err := s.History(ctx, HistoryRequest{Prefix: prefix, Limit: 1})
			found.History = len(page.Entries) > 0
			return err
		})
		if err != nil && !errors.Is(err, ErrHistoryUnsupported) {
			return ForgetStats{}, fmt.Errorf("agentmem: forget %q: reading its history: %w", prefix, err)
		}
		if err := opts.Confirm(ctx, found); err != nil {
			return ForgetStats{}, err
		}
	}

	var st ForgetStats
	for _, f := range files {
		err := call(func(ctx context.Context) error {
			_, err := s.Delete(ctx, DeleteRequest{Path: f.path, Expected: f.version})
			return err
		})
		switch {
		case errors.Is(err, ErrConflict):
			st.Kept++
		case err != nil:
			return st, fmt.Errorf("agentmem: forget %q: erased %d of %d files, then %q: %w", prefix, st.Deleted, len(files), f.path, err)
		default:
			st.Deleted++
		}
	}
	// After the deletes, which are recorded too; a file kept is forgotten
	// by the rerun, which erases the history again.
	err := call(func(ctx context.Context) (err error) {
		st.HistoryEntries, err = s.ForgetHistory(ctx, prefix)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("agentmem: forget %q: erased %d files, then its history: %w", prefix, st.Deleted, err)
	}
	// And the search index's rows, which no listing shows.
	err = call(func(ctx context.Context) (err error) { st.IndexRows, err = s.ForgetIndex(ctx, prefix); return err })
	if err != nil {
		return st, fmt.Errorf("agentmem: forget %q: erased %d files and its history, then its search index: %w", prefix, st.Deleted, err)
	}
	if st.Kept > 0 {
		return st, fmt.Errorf("%w: forget %q: %d files changed after they were listed and were kept; run forget again", ErrConflict, prefix, st.Kept)
	}
	return st, nil
}
