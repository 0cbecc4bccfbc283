package pruned

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/internal/canon"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// A rotating append ([AppendSeries]) writes to a series of files
// named after its path: the path itself first ("kamal/main/pruned.md"),
// then the path with "_0002", "_0003", … before its extension
// ("kamal/main/pruned_0002.md"). The underscore sorts after "." and the
// zero-padded number sorts as it counts, so the notebook's file list (code
// point order) shows the series in order: pruned.md, pruned_0002.md, …,
// pruned_9999.md (from 10,000 on the names grow a digit and the listing
// order, not the rotation, breaks).
//
// Exactly once across the boundary. A store keeps one receipt per
// operation id, whatever the path, and checks it before the file's size on
// every path of [store.Store.Append]. A rotating append therefore uses the
// caller's operation id unchanged for every file of the series, with a
// fingerprint that names the series (its first path) and the text, never
// the file it is tried on: the same fingerprint as a plain [memory.Append] to the
// first path. When the original landed in pruned.md and its reply was
// lost, its retry after pruned.md filled up tries pruned_0002.md and is
// answered there from the receipt (Replayed, the original's Mutation),
// before anything is written; two deliveries of one operation racing at
// the boundary are settled by the receipt the same way. This holds for as
// long as the store keeps receipts (store.Options.ReceiptRetention).

// AppendedAtKey is the metadata key a rotating append records on the file
// it writes: the time of the append, RFC 3339 in UTC. [RotateOptions.MaxAge]
// reads it.
const AppendedAtKey = "appended_at"

// RetentionUpdatedBy is the [memory.UpdatedByKey] recorded with each delete made
// by a series' retention, unless [RotateOptions.Metadata] names another.
const RetentionUpdatedBy = "agentmem-retention"

// RetentionReasonKey is the metadata key that says why a series' retention
// deleted a file.
const RetentionReasonKey = "retention"

// ErrRetention reports that a rotating append landed (its Mutation is
// returned with the error) but deleting old files of the series failed:
// they are tried again when the series next moves to a new file, or by
// [PruneSeries].
var ErrRetention = errors.New("pruned: the append landed, but deleting old files of its series failed")

// RotateOptions makes an append rotate (see [AppendSeries]) and
// sets the retention of the series' old files. The zero value rotates and
// keeps every file.
type RotateOptions struct {
	// MaxFiles, when > 0, keeps at most this many files of the series, the
	// current one included: when the series moves to a new file, the
	// oldest files past the count are deleted. Pinned files
	// ([store.WriteRequest].Pinned) are not counted: retention never
	// deletes one.
	MaxFiles int
	// MaxAge, when > 0, deletes each file of the series but the current
	// one whose last append ([AppendedAtKey]) is older than MaxAge, when
	// the series moves to a new file. A file without the key (written
	// before rotation was on) is kept until MaxFiles removes it. A pinned
	// file is kept however old.
	MaxAge time.Duration
	// Metadata is recorded with each retention delete, over the defaults
	// {[memory.UpdatedByKey]: [RetentionUpdatedBy], [RetentionReasonKey]: why}: a
	// key in both takes this value. History, when the store keeps it,
	// records the delete with it, so the file can be restored.
	Metadata map[string]string
}

// now is the clock of rotating appends and retention (tests replace it).
var now = time.Now

// seriesWalkPage is the page size of a series' listing.
const seriesWalkPage = 1000

// SeriesPath returns the path of the n-th file (n >= 1) of the series
// that starts at path: path itself for n <= 1, else path with "_" and n
// (at least four digits) inserted before its extension:
// SeriesPath("kamal/main/pruned.md", 2) is "kamal/main/pruned_0002.md".
func SeriesPath(path string, n int) string {
	if n <= 1 {
		return path
	}
	stem, ext := splitExt(path)
	return fmt.Sprintf("%s_%04d%s", stem, n, ext)
}

// splitExt splits path before the extension of its last segment (".md");
// ext is "" when the segment has none.
func splitExt(path string) (stem, ext string) {
	seg := strings.LastIndexByte(path, '/') + 1
	if dot := strings.LastIndexByte(path[seg:], '.'); dot > 0 {
		return path[:seg+dot], path[seg+dot:]
	}
	return path, ""
}

// seriesIndex returns n when p is SeriesPath(path, n) for some n >= 2.
func seriesIndex(path, p string) (int, bool) {
	stem, ext := splitExt(path)
	digits, ok := strings.CutPrefix(p, stem+"_")
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, ext); !ok || digits == "" || len(digits) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 2 || SeriesPath(path, n) != p {
		return 0, false
	}
	return n, true
}

// SeriesPaths returns the files of the series that starts at path (see
// [SeriesPath]), oldest first: path itself when it exists, then each
// rotated file found. It reads the series' listing (one page per 1,000
// rotated files) and, for path itself, one bounded read. Errors:
// store.ErrNoDriver, store.ErrInvalidPath, or the backend's error.
func SeriesPaths(ctx context.Context, s *store.Store, path string) ([]string, error) {
	if s == nil {
		return nil, fmt.Errorf("pruned: SeriesPaths needs a store, got nil: %w", store.ErrNoDriver)
	}
	if err := store.ValidatePath(path); err != nil {
		return nil, err
	}
	idx, err := seriesIndexes(ctx, s, path)
	if err != nil {
		return nil, err
	}
	var out []string
	if _, err := s.Read(ctx, path, 1); err == nil {
		out = append(out, path)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	for _, n := range idx {
		out = append(out, SeriesPath(path, n))
	}
	return out, nil
}

// seriesIndexes returns the indexes (>= 2) of the rotated files of path's
// series that exist, ascending.
func seriesIndexes(ctx context.Context, s *store.Store, path string) ([]int, error) {
	files, err := seriesFiles(ctx, s, path)
	idx := make([]int, len(files))
	for i, f := range files {
		idx[i] = f.n
	}
	return idx, err
}

// seriesFile is one rotated file of a series: its index and its pin.
type seriesFile struct {
	n      int
	pinned bool
}

// seriesFiles returns the rotated files (index >= 2) of path's series that
// exist, ascending, each with its pin (the listing carries it: no read).
func seriesFiles(ctx context.Context, s *store.Store, path string) ([]seriesFile, error) {
	stem, _ := splitExt(path)
	prefix := stem + "_"
	var out []seriesFile
	var opts []store.ListOptions
	for {
		es, err := s.ListEntries(ctx, prefix, seriesWalkPage, opts...)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if n, ok := seriesIndex(path, e.Path); ok {
				out = append(out, seriesFile{n: n, pinned: e.Pinned})
			}
		}
		if len(es) < seriesWalkPage {
			break
		}
		opts = []store.ListOptions{{After: es[len(es)-1].Path}}
	}
	slices.SortFunc(out, func(a, b seriesFile) int { return a.n - b.n })
	return out, nil
}

// AppendSeries appends text to the series that starts at path, as
// [memory.Append] does, but never fails for size: path is the first file
// of a series ([SeriesPath]: pruned.md, pruned_0002.md, …), and an append
// that would take the series' newest file past opts.MaxMemorySize goes to
// the next file instead of failing with store.ErrTooLarge (only an entry
// longer than MaxMemorySize on its own still does). With an OperationID
// the append lands exactly once in the whole series: a retry or a
// concurrent delivery is answered from the store's receipt wherever the
// original landed (Replayed), also after that file filled up or was
// deleted. Each append records [AppendedAtKey] in the file's metadata, and
// r's retention (nil keeps every file) runs each time the series moves to
// a new file. The newest file is found by listing the series: one more
// request per append ([QueueOptions.Rotate] remembers it instead).
//
// Errors: those of memory.Append, store.ErrTooLarge only for a text longer
// than MaxMemorySize alone, and [ErrRetention] with the landed append's
// Mutation (r's retention failed).
func AppendSeries(ctx context.Context, s *store.Store, path, text string, opts *memory.AppendOptions, r *RotateOptions) (store.Mutation, error) {
	return appendSeries(ctx, s, path, text, opts, r, nil)
}

// appendSeries is [AppendSeries] with a hint: *hint, when hint is non-nil
// and *hint > 0, is the file to try first (the last one this caller
// wrote); it is set to the file the text landed in. Without one the
// series' listing names the current file.
func appendSeries(ctx context.Context, s *store.Store, path, text string, opts *memory.AppendOptions, r *RotateOptions, hint *int) (store.Mutation, error) {
	if s == nil {
		return store.Mutation{}, fmt.Errorf("pruned: AppendSeries needs a store, got nil: %w", store.ErrNoDriver)
	}
	var o memory.AppendOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxMemorySize <= 0 {
		o.MaxMemorySize = memory.DefaultMaxMemorySize
	}
	if err := store.ValidatePath(path); err != nil {
		return store.Mutation{}, err
	}
	if notes.IsBlank(text) {
		return store.Mutation{}, nil
	}
	entry := strings.TrimRightFunc(text, notes.IsSpace)
	if n := utf8.RuneCountInString(entry) + 1; n > o.MaxMemorySize {
		return store.Mutation{}, fmt.Errorf("pruned: append to %q: the entry alone is %d characters, over the per-file bound %d, so no file of the series can hold it; split it or raise MaxMemorySize: %w",
			path, n, o.MaxMemorySize, store.ErrTooLarge)
	}
	op := notes.AppendOperation(o.OperationID, path, text)
	meta := maps.Clone(o.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	if _, set := meta[AppendedAtKey]; !set {
		meta[AppendedAtKey] = now().UTC().Format(time.RFC3339)
	}
	n, last := 0, 0 // the file to try; the newest one listed (0: not listed)
	if hint != nil {
		n = *hint
	}
	if n < 1 {
		var err error
		if last, err = lastIndex(ctx, s, path); err != nil {
			return store.Mutation{}, err
		}
		n = last
	}
	moved := false
	for {
		m, err := s.Append(ctx, store.AppendRequest{Path: SeriesPath(path, n), Text: text, MaxChars: o.MaxMemorySize, Metadata: meta, Operation: op})
		if errors.Is(err, store.ErrTooLarge) {
			// Full: the next file, or the newest another writer started.
			fresh := last > 0 && n > last // n was not there when listed
			var lerr error
			if last, lerr = lastIndex(ctx, s, path); lerr != nil {
				return store.Mutation{}, lerr
			}
			if fresh && last < n {
				// Refused by a new, empty file: the backend's own row
				// limit, below MaxMemorySize. Rotating cannot help.
				return m, err
			}
			n, moved = max(n+1, last), true
			continue
		}
		if err != nil {
			return m, err
		}
		if hint != nil {
			*hint = n
		}
		if moved && !m.Replayed && r != nil && (r.MaxFiles > 0 || r.MaxAge > 0) {
			if _, rerr := pruneSeries(ctx, s, path, *r, n); rerr != nil {
				return m, fmt.Errorf("%w: %w", ErrRetention, rerr)
			}
		}
		return m, nil
	}
}

// lastIndex returns the index of the newest file of path's series (1 when
// nothing was rotated yet).
func lastIndex(ctx context.Context, s *store.Store, path string) (int, error) {
	idx, err := seriesIndexes(ctx, s, path)
	if err != nil || len(idx) == 0 {
		return 1, err
	}
	return idx[len(idx)-1], nil
}

// PruneSeries applies r's retention to the series that starts at path now
// (a rotating append applies it each time the series moves to a new
// file), and returns the paths it deleted, oldest first. The newest file
// and pinned files are never deleted. Each delete is a compare-and-swap
// on the version read just before, with an operation id derived from the
// path and that version (a rerun deletes nothing twice) and r.Metadata,
// so the store's history records who deleted what; a file changed (or
// pinned) meanwhile is kept until the next pruning. It costs the series'
// listing (which carries each file's pin), one bounded read of path
// itself and one per other old file (per file past MaxFiles when MaxAge
// is 0) and one delete per file removed. Errors: store.ErrNoDriver, store.ErrInvalidPath,
// store.ErrInvalidMetadata, or the backend's error (the paths deleted
// before it are returned with it).
func PruneSeries(ctx context.Context, s *store.Store, path string, r *RotateOptions) ([]string, error) {
	if s == nil {
		return nil, fmt.Errorf("pruned: PruneSeries needs a store, got nil: %w", store.ErrNoDriver)
	}
	if err := store.ValidatePath(path); err != nil {
		return nil, err
	}
	if r == nil || (r.MaxFiles <= 0 && r.MaxAge <= 0) {
		return nil, nil
	}
	return pruneSeries(ctx, s, path, *r, 0)
}

// pruneSeries deletes the old files of path's series that r's retention
// no longer keeps. current, when > 0, is the file just written: it and
// every later one are kept.
func pruneSeries(ctx context.Context, s *store.Store, path string, r RotateOptions, current int) ([]string, error) {
	if err := store.ValidateMetadata(r.Metadata); err != nil {
		return nil, err
	}
	rotated, err := seriesFiles(ctx, s, path)
	if err != nil {
		return nil, err
	}
	// path itself: read here for its pin (the series' listing does not
	// reach it); absent, it is left out.
	var files []seriesFile
	if f, err := s.Read(ctx, path, 1); err == nil {
		files = append(files, seriesFile{n: 1, pinned: f.Pinned})
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	files = append(files, rotated...)
	if len(files) == 0 {
		return nil, nil
	}
	if current <= 0 {
		current = files[len(files)-1].n
	}
	var old []seriesFile // files before the current one
	for _, f := range files {
		if f.n < current {
			old = append(old, f)
		}
	}
	// The files to keep by count: the newest MaxFiles-1 unpinned files
	// before the current one, counting only those that exist (path itself
	// may not). A pinned file is always kept and not counted.
	t := now()
	var deleted []string
	kept := 0
	for i := len(old) - 1; i >= 0; i-- {
		if old[i].pinned {
			continue
		}
		p := SeriesPath(path, old[i].n)
		overCount := r.MaxFiles > 0 && kept >= r.MaxFiles-1
		if !overCount && r.MaxAge <= 0 {
			kept++
			continue
		}
		f, err := s.Read(ctx, p, 1)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return reverse(deleted), err
		}
		if f.Pinned {
			continue // pinned since the listing: kept, as above
		}
		reason := ""
		switch {
		case overCount:
			reason = fmt.Sprintf("past %d files", r.MaxFiles)
		case r.MaxAge > 0:
			if at, perr := time.Parse(time.RFC3339, f.Metadata[AppendedAtKey]); perr == nil && t.Sub(at) > r.MaxAge {
				reason = fmt.Sprintf("last append older than %s", r.MaxAge)
			}
		}
		if reason == "" {
			kept++
			continue
		}
		meta := map[string]string{memory.UpdatedByKey: RetentionUpdatedBy, RetentionReasonKey: reason}
		maps.Copy(meta, r.Metadata)
		key := map[string]any{"kind": "retention_delete", "path": p, "version": f.Version}
		_, err = s.Delete(ctx, store.DeleteRequest{Path: p, Expected: f.Version, Metadata: meta, Operation: &store.Operation{
			ID:          "agentmem-retention:" + canon.Hash(key),
			Fingerprint: canon.Hash(key),
		}})
		switch {
		case errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound):
			// Changed (or gone) since the read: the next pruning decides.
			kept++
		case err != nil:
			return reverse(deleted), err
		default:
			deleted = append(deleted, p)
		}
	}
	return reverse(deleted), nil
}

func reverse(s []string) []string { slices.Reverse(s); return s }
