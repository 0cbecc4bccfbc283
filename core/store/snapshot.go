// ReadAndList: one file and a folder's listing in one round trip.

package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentmem/agentmem/core/driver"
)

// ReadAndListRequest is one [Store.ReadAndList]: a bounded read of one file
// and a listing, as a notebook's per-request snapshot needs.
type ReadAndListRequest struct {
	// Path is the file to read, as for [Store.Read].
	Path string
	// MaxChars bounds the content returned, in runes (> 0).
	MaxChars int
	// Prefix selects the listing, as for [Store.ListPaths].
	Prefix string
	// Limit is the most paths to list (> 0).
	Limit int
}

// ReadAndListResult is the result of [Store.ReadAndList].
type ReadAndListResult struct {
	// File is the file read, or nil when it does not exist.
	File *File
	// Paths are the limit smallest paths under the prefix.
	Paths []string
	// Entries are Paths with each file's expiry and pin.
	Entries []Entry
}

// ReadAndList reads one file and lists a prefix in one round trip: one
// request on a driver with [driver.SnapshotReader], otherwise a read and a
// listing issued concurrently. The file is as [Store.Read] returns it,
// except that an absent file is a nil File rather than ErrNotFound; the
// paths are as [Store.ListPaths] returns them. The two are not one
// consistent view: a write between them may show in one and not the other.
//
// Errors: ErrInvalidPath (path or prefix), ErrInvalidBound (MaxChars or
// Limit not positive), or the backend's error.
func (s *Store) ReadAndList(ctx context.Context, r ReadAndListRequest) (out *ReadAndListResult, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpReadAndList})
	defer func() {
		n := 0
		if out != nil {
			n = len(out.Paths)
		}
		o.done(err, false, n)
	}()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePath(r.Path); err != nil {
		return nil, err
	}
	if err := ValidatePrefix(r.Prefix); err != nil {
		return nil, err
	}
	if r.MaxChars <= 0 {
		return nil, fmt.Errorf("%w: max_chars must be positive, got %d", ErrInvalidBound, r.MaxChars)
	}
	if r.Limit <= 0 {
		return nil, fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidBound, r.Limit)
	}
	var f *driver.File
	var listed []Entry
	if s.snap != nil {
		var entries []driver.Entry
		f, entries, err = s.snap.ReadSnapshot(ctx, driver.SnapshotParams{Path: r.Path,
			List: driver.ListParams{Prefix: r.Prefix, Limit: r.Limit}})
		if err != nil {
			return nil, err
		}
		listed, err = s.listEntries(ctx, r.Prefix, "", r.Limit, false, &entries)
	} else {
		var wg sync.WaitGroup
		var lerr error
		wg.Go(func() { listed, lerr = s.listEntries(ctx, r.Prefix, "", r.Limit, false, nil) })
		f, err = s.d.GetFile(ctx, r.Path)
		wg.Wait()
		if err == nil {
			err = lerr
		}
	}
	if err != nil {
		return nil, err
	}
	out = &ReadAndListResult{Paths: make([]string, len(listed)), Entries: listed}
	for i, e := range listed {
		out.Paths[i] = e.Path
	}
	if s.live(f) {
		out.File = fileOf(r.Path, f, r.MaxChars)
	}
	return out, nil
}
