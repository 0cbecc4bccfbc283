// Reads of one file, of a batch of files (getFiles), and listings of paths.

package store

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// Read returns at most maxChars runes of the file at path, with the version
// of the whole file. It fails with ErrNotFound when the file is absent,
// ErrInvalidPath for a bad path and ErrInvalidBound when maxChars <= 0.
func (s *Store) Read(ctx context.Context, path string, maxChars int) (_ *File, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpRead})
	defer func() { o.done(err, false, boolInt(err == nil)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if maxChars <= 0 {
		return nil, fmt.Errorf("%w: max_chars must be positive, got %d", ErrInvalidBound, maxChars)
	}
	f, err := s.d.GetFile(ctx, path)
	if err != nil {
		return nil, err
	}
	if !s.live(f) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, path)
	}
	return fileOf(path, f, maxChars), nil
}

// fileOf is what a read of row f at path returns: at most maxChars runes.
func fileOf(path string, f *driver.File, maxChars int) *File {
	content, truncated := cutRunes(f.Content, maxChars)
	meta, expires, pinned := userMetadata(f.Metadata)
	return &File{
		Path:        path,
		Content:     content,
		Version:     f.Version,
		OperationID: shownOperation(f.OperationID),
		Truncated:   truncated,
		Metadata:    meta,
		ExpiresAt:   expires,
		Pinned:      pinned,
	}
}

// ListPaths returns the limit smallest paths (code-point order) that start
// with prefix, a plain string prefix: "tenant" also matches "tenant-b/x".
// Nested paths are included. With [ListOptions].After it returns the
// limit smallest after that path instead: the next page of a listing
// whose last path was After. It fails with ErrInvalidPath (for the prefix
// or After) or ErrInvalidBound.
func (s *Store) ListPaths(ctx context.Context, prefix string, limit int, opts ...ListOptions) (paths []string, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpListPaths})
	defer func() { o.done(err, false, len(paths)) }()
	after, err := s.checkList(ctx, prefix, limit, opts)
	if err != nil {
		return nil, err
	}
	return s.listAfter(ctx, prefix, after, limit, false, nil)
}

// checkList validates a listing's arguments and returns the path it
// starts after.
func (s *Store) checkList(ctx context.Context, prefix string, limit int, opts []ListOptions) (string, error) {
	if err := s.usable(ctx); err != nil {
		return "", err
	}
	if err := ValidatePrefix(prefix); err != nil {
		return "", err
	}
	if limit <= 0 {
		return "", fmt.Errorf("%w: limit must be positive, got %d", ErrInvalidBound, limit)
	}
	return listAfter(prefix, opts)
}

// list pages through the driver, skipping tombstones (and nested paths when
// direct is set), until limit paths are found or the prefix is exhausted.
// A direct listing whose page ends inside a nested folder starts the next
// page after that folder's whole range, so it never pages through a
// folder's files only to throw them away.
func (s *Store) list(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	return s.listFrom(ctx, prefix, limit, direct, nil)
}

// listFrom is list with its first page (asked with After "" and Limit
// limit) already read when first is non-nil.
func (s *Store) listFrom(ctx context.Context, prefix string, limit int, direct bool, first *[]driver.Entry) ([]string, error) {
	return s.listAfter(ctx, prefix, "", limit, direct, first)
}

// listAfter is listFrom from the string after on ("" = from the start).
func (s *Store) listAfter(ctx context.Context, prefix, after string, limit int, direct bool, first *[]driver.Entry) ([]string, error) {
	var out []string
	err := s.listLive(ctx, prefix, after, limit, direct, first, func(e driver.Entry) { out = append(out, e.Path) })
	return out, err
}

// listEntries is listAfter with each file's lifetime.
func (s *Store) listEntries(ctx context.Context, prefix, after string, limit int, direct bool, first *[]driver.Entry) ([]Entry, error) {
	var out []Entry
	err := s.listLive(ctx, prefix, after, limit, direct, first, func(e driver.Entry) { out = append(out, entryOf(e)) })
	return out, err
}

// listLive pages through the driver's listing, calling add with each file
// to list (expired files are left out, as tombstones are) until limit.
func (s *Store) listLive(ctx context.Context, prefix, after string, limit int, direct bool, first *[]driver.Entry, add func(driver.Entry)) error {
	found := 0
	now := driver.FormatExpiry(s.now())
	for found < limit {
		page := limit - found
		var entries []driver.Entry
		if first != nil {
			entries, first = *first, nil
		} else {
			var err error
			if entries, err = s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: page}); err != nil {
				return err
			}
		}
		skip := ""
		for _, e := range entries {
			if end, ok := rowpath.ReservedAt(e.Path); ok {
				skip = max(skip, end) // the store's derived rows are never files
				continue
			}
			if e.Tombstone || e.Lifetime.ExpiredBy(now) || (direct && !rowpath.DirectlyUnder(e.Path, prefix)) {
				continue
			}
			add(e)
			found++
		}
		if len(entries) < page {
			break
		}
		after = entries[len(entries)-1].Path
		if direct {
			after = pastFolder(after, prefix)
		}
		after = max(after, skip)
	}
	return nil
}

// readFilesBatch is the most paths of one batched read of ReadFiles.
const readFilesBatch = 256

// ReadFiles reads the files at paths as Read does, each cut to maxChars
// runes: in one backend request per 256 paths on a driver with batched
// reads (driver.BatchGetter), one read a path otherwise. It returns the
// files that exist, in the order of paths (a path given twice once); a
// path with no file is left out. An Observer sees one OpRead whose count
// is the files returned.
//
// Errors: ErrNilArgument (a nil ctx), ErrInvalidPath, ErrInvalidBound
// (maxChars not positive), or the backend's error.
func (s *Store) ReadFiles(ctx context.Context, paths []string, maxChars int) (files []*File, err error) {
	if ctx == nil {
		return nil, fmt.Errorf("agentmem: pass a context to ReadFiles, not nil: %w", ErrNilArgument)
	}
	ctx, o := s.observe(ctx, OperationInfo{Op: OpRead})
	defer func() { o.done(err, false, len(files)) }()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if maxChars <= 0 {
		return nil, fmt.Errorf("%w: max_chars must be positive, got %d", ErrInvalidBound, maxChars)
	}
	for _, p := range paths {
		if err := ValidatePath(p); err != nil {
			return nil, err
		}
	}
	seen := make(map[string]bool, len(paths))
	for rest := paths; len(rest) > 0; {
		batch := rest[:min(len(rest), readFilesBatch)]
		rest = rest[len(batch):]
		rows, err := s.getFiles(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, p := range batch {
			if f := rows[p]; s.live(f) && !seen[p] {
				seen[p] = true
				files = append(files, fileOf(p, f, maxChars))
			}
		}
	}
	return files, nil
}

// getFiles reads paths with the driver's batched read, or one by one.
func (s *Store) getFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	out := make(map[string]*driver.File, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	if s.batch != nil {
		files, err := s.batch.GetFiles(ctx, paths)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f != nil {
				out[f.Path] = f
			}
		}
		return out, nil
	}
	for _, p := range paths {
		f, err := s.d.GetFile(ctx, p)
		if err != nil {
			return nil, err
		}
		out[p] = f
	}
	return out, nil
}
