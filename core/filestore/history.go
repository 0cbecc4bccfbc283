package filestore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// History entries live in <sidecar>/history, in one folder per file path
// (the entries of "kamal/main/MEMORY.md" in
// <sidecar>/history/kamal/main/MEMORY.md/), one JSON file per entry named
// "~" + the inverted version part of its key (driver.HistoryKey) + ".json",
// so that a folder read in name order gives a file's entries newest first.
// "~" cannot start a path segment, so entries never collide with the
// folders of longer paths ("kamal/main/MEMORY.md/x.md"). A pending entry
// is named "….pending.json"; completing it is a rename. A listing reads
// only the folders under its prefix, in key order, and stops once its page
// is full; each entry has an expiry marker (kind "h", holding the key), so
// a prune finds expired entries without reading anyone's history.
const (
	historyDirName = "history"
	entryPrefix    = "~"
	entrySuffix    = ".json"
	pendingSuffix  = ".pending.json"
	hexStem        = "=" // after entryPrefix: the stem is hex (it holds bytes a name cannot)
	kindHistory    = "h"
	// historyBatch is how many entries DeleteHistory removes per hold of
	// the exclusive lock.
	historyBatch = 64
)

// historyRecord is an entry as stored on disk; whether it is pending is
// in its file name.
type historyRecord struct {
	Path      string            `json:"path"`
	Version   string            `json:"version"`
	Previous  string            `json:"previous,omitempty"`
	Kind      driver.Kind       `json:"kind"`
	Op        string            `json:"op,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	Content   string            `json:"content,omitempty"`
	Time      time.Time         `json:"time"`
	ExpiresAt time.Time         `json:"expires_at,omitzero"`
}

func recordOf(e driver.HistoryEntry) historyRecord {
	return historyRecord{Path: e.Path, Version: e.Version, Previous: e.Previous, Kind: e.Kind, Op: e.OperationID,
		Metadata: e.Metadata, Content: e.Content, Time: e.Time, ExpiresAt: e.ExpiresAt}
}

func (r historyRecord) entry(pending bool) driver.HistoryEntry {
	return driver.HistoryEntry{Path: r.Path, Version: r.Version, Previous: r.Previous, Kind: r.Kind, OperationID: r.Op,
		Metadata: r.Metadata, Content: r.Content, Time: r.Time, ExpiresAt: r.ExpiresAt, Pending: pending}
}

func (d *Driver) historyRoot() string { return filepath.Join(d.sidecar, historyDirName) }

// historyDir is the folder of path's entries (the root for "").
func (d *Driver) historyDir(path string) string {
	return filepath.Join(d.historyRoot(), filepath.FromSlash(path))
}

// splitKey returns the path and the inverted stem of a history key.
func splitKey(key string) (path, stem string, ok bool) {
	return strings.Cut(key, " ") // a path holds no space
}

// entryName is the file name of the entry whose key ends in stem.
func entryName(stem string, pending bool) string {
	name := entryPrefix + stem
	if stem == "" || strings.ContainsFunc(stem, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_' || r == '-')
	}) {
		name = entryPrefix + hexStem + hex.EncodeToString([]byte(stem))
	}
	if pending {
		return name + pendingSuffix
	}
	return name + entrySuffix
}

// parseEntryName returns the stem and state of an entry's file name; ok
// is false for any other name.
func parseEntryName(name string) (stem string, pending, ok bool) {
	rest, found := strings.CutPrefix(name, entryPrefix)
	if !found {
		return "", false, false
	}
	if s, found := strings.CutSuffix(rest, pendingSuffix); found {
		rest, pending = s, true
	} else if rest, found = strings.CutSuffix(rest, entrySuffix); !found {
		return "", false, false
	}
	if h, found := strings.CutPrefix(rest, hexStem); found {
		b, err := hex.DecodeString(h)
		if err != nil {
			return "", false, false
		}
		return string(b), pending, true
	}
	return rest, pending, rest != ""
}

// historyRef names one stored entry.
type historyRef struct {
	key     string
	path    string
	name    string // the file name in historyDir(path)
	pending bool
}

func (d *Driver) refFile(r historyRef) string { return filepath.Join(d.historyDir(r.path), r.name) }

// findHistory returns the stored entry of path at version with its
// state, or nil. An entry of another version with the same key (the same
// first 26 characters) is none.
func (d *Driver) findHistory(path, version string) (*historyRecord, historyRef, error) {
	_, stem, _ := splitKey(driver.HistoryKey(path, version))
	for _, pending := range []bool{false, true} {
		ref := historyRef{key: driver.HistoryKey(path, version), path: path, name: entryName(stem, pending), pending: pending}
		var rec historyRecord
		ok, err := readJSON(d.refFile(ref), &rec)
		if err != nil {
			return nil, historyRef{}, err
		}
		if ok && rec.Version == version {
			return &rec, ref, nil
		}
	}
	return nil, historyRef{}, nil
}

// keyTaken reports whether any entry (of any version) has key.
func (d *Driver) keyTaken(path, stem string) (bool, error) {
	for _, pending := range []bool{false, true} {
		_, err := os.Lstat(filepath.Join(d.historyDir(path), entryName(stem, pending)))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return false, err
		}
	}
	return false, nil
}

// putHistory writes e (its expiry marker first) unless its key is taken;
// the caller holds the exclusive lock.
func (d *Driver) putHistory(e driver.HistoryEntry, pending bool) error {
	key := e.Key()
	_, stem, _ := splitKey(key)
	if err := reserved(e.Path); err != nil {
		return err
	}
	if taken, err := d.keyTaken(e.Path, stem); err != nil || taken {
		if err == nil {
			err = driver.ErrPrecondition
		}
		return err
	}
	if !e.ExpiresAt.IsZero() {
		if err := writeMarker(d.markerPath(e.ExpiresAt, kindHistory, receiptKey(key)), []byte(key)); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(d.historyDir(e.Path), entryName(stem, pending)), recordOf(e))
}

// completeHistory renames the pending entry ref to its complete name; the
// caller holds the exclusive lock.
func (d *Driver) completeHistory(ref historyRef) error {
	_, stem, _ := splitKey(ref.key)
	dir := d.historyDir(ref.path)
	return os.Rename(filepath.Join(dir, ref.name), filepath.Join(dir, entryName(stem, false)))
}

// removeHistory removes the entry file name in path's folder and then the
// folders it leaves empty; the caller holds the exclusive lock.
func (d *Driver) removeHistory(path, name string) error {
	dir := d.historyDir(path)
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	root := d.historyRoot()
	for ; dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty (or gone): the folders above are in use
		}
	}
	return nil
}

// completeReplaced completes a pending entry of path at version, the
// version a change is about to replace: the row carries it, so the change
// that made it landed, and once the row moves on nothing else could tell.
// The store does the same before it replaces a version that names an
// operation; this also covers an Append's own entry, which a crash
// between the file and the entry's completion leaves pending (an append's
// version names no operation). It costs one failed lookup when there is
// no pending entry. The caller holds the exclusive lock.
func (d *Driver) completeReplaced(path, version string) error {
	_, stem, _ := splitKey(driver.HistoryKey(path, version))
	ref := historyRef{key: driver.HistoryKey(path, version), path: path, name: entryName(stem, true), pending: true}
	var rec historyRecord
	ok, err := readJSON(d.refFile(ref), &rec)
	if err != nil || !ok || rec.Version != version {
		return err
	}
	return d.completeHistory(ref)
}

// PutHistory implements driver.Historian.
func (d *Driver) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	return d.putHistory(e, e.Pending)
}

// CompleteHistory implements driver.Historian: a rename of the pending
// entry's file.
func (d *Driver) CompleteHistory(ctx context.Context, path, version string) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	rec, ref, err := d.findHistory(path, version)
	switch {
	case err != nil:
		return err
	case rec == nil:
		return driver.ErrPrecondition
	case !ref.pending:
		return nil
	}
	return d.completeHistory(ref)
}

// DropHistory implements driver.Historian.
func (d *Driver) DropHistory(ctx context.Context, path, version string) error {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	rec, ref, err := d.findHistory(path, version)
	switch {
	case err != nil || rec == nil:
		return err
	case !ref.pending:
		return driver.ErrPrecondition
	}
	return d.removeHistory(path, ref.name)
}

// GetHistory implements driver.Historian.
func (d *Driver) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, ref, err := d.findHistory(path, version)
	if err != nil || rec == nil {
		return nil, err
	}
	e := rec.entry(ref.pending)
	return &e, nil
}

// ListHistory implements driver.Historian: a walk, in key order, of the
// folders under the prefix only, which stops once the page is full.
func (d *Driver) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	refs, err := d.scanHistory(ctx, p.Prefix, p.After, p.Limit)
	if err != nil {
		return nil, err
	}
	out := make([]driver.HistoryEntry, 0, len(refs))
	for _, r := range refs {
		var rec historyRecord
		ok, err := readJSON(d.refFile(r), &rec)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, rec.entry(r.pending))
		}
	}
	return out, nil
}

// DeleteHistory implements driver.Historian, removing at most 64 entries
// per hold of the exclusive lock.
func (d *Driver) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	n, after := 0, ""
	for {
		k, last, err := d.deleteHistoryBatch(ctx, prefix, after)
		n += k
		if err != nil || k < historyBatch {
			return n, err
		}
		after = last
	}
}

// deleteHistoryBatch removes the next entries under prefix after the key
// after, and returns how many and the last key.
func (d *Driver) deleteHistoryBatch(ctx context.Context, prefix, after string) (int, string, error) {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return 0, "", err
	}
	defer unlock()
	refs, err := d.scanHistory(ctx, prefix, after, historyBatch)
	if err != nil {
		return 0, "", err
	}
	for i, r := range refs {
		if err := d.removeHistory(r.path, r.name); err != nil {
			return i, "", err
		}
	}
	if len(refs) == 0 {
		return 0, "", nil
	}
	return len(refs), refs[len(refs)-1].key, nil
}

// pruneHistory settles the history marker named marker (see pruneMarkers):
// it moves the entry the marker's key names to the trash if that expired
// before now (removing the entry's folders left empty), and returns the
// trash names for the caller to unlink once the lock is released. The
// caller holds the exclusive lock.
func (d *Driver) pruneHistory(marker, key string, now time.Time) ([]string, error) {
	b, err := os.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // settled by a concurrent prune
	}
	if err != nil {
		return nil, err
	}
	path, stem, ok := splitKey(string(b))
	if !ok || reserved(path) != nil || !validMarkedPath(path) {
		return nil, nil // not a key this driver wrote; the marker goes
	}
	var trashed []string
	for _, pending := range []bool{false, true} {
		name := entryName(stem, pending)
		var rec historyRecord
		// A corrupt entry is kept (reading it reports it).
		ok, err := readJSON(filepath.Join(d.historyDir(path), name), &rec)
		if err != nil || !ok || rec.ExpiresAt.IsZero() || !rec.ExpiresAt.Before(now) || driver.HistoryKey(rec.Path, rec.Version) != string(b) {
			continue
		}
		if trashed, err = d.trash(trashed, filepath.Join(d.historyDir(path), name), fmt.Sprintf("%s-%s-%v", kindHistory, key, pending)); err != nil {
			return trashed, err
		}
		if err := d.removeHistory(path, name); err != nil { // the folders it left empty
			return trashed, err
		}
	}
	return trashed, nil
}

// scanHistory returns, in key order, up to limit entries whose key starts
// with prefix and is greater than after. It reads only folders that may
// hold such keys: for a file's entries (a prefix with a space) that file's
// folder alone; otherwise the deepest folder the prefix names and, in key
// order, the folders below it, until limit entries are found.
func (d *Driver) scanHistory(ctx context.Context, prefix, after string, limit int) ([]historyRef, error) {
	w := historyWalk{ctx: ctx, d: d, prefix: prefix, after: after, limit: limit}
	if path, _, ok := splitKey(prefix); ok {
		return w.out, w.entries(path)
	}
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	return w.out, w.below(dir)
}

// historyWalk is one scanHistory.
type historyWalk struct {
	ctx           context.Context
	d             *Driver
	prefix, after string
	limit         int
	out           []historyRef
	read          map[string][]os.DirEntry // folders read, each read once
}

func (w *historyWalk) full() bool { return len(w.out) >= w.limit }

// readDir lists a history folder (once per walk: a path's folder holds
// both its entries and the folders below it); a missing one (or a file
// on its way) is empty.
func (w *historyWalk) readDir(path string) ([]os.DirEntry, error) {
	if entries, ok := w.read[path]; ok {
		return entries, nil
	}
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	if path != "" && reserved(path) != nil {
		return nil, nil
	}
	if w.d.historyRead != nil {
		w.d.historyRead(path)
	}
	entries, err := os.ReadDir(w.d.historyDir(path))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		entries, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if w.read == nil {
		w.read = map[string][]os.DirEntry{}
	}
	w.read[path] = entries
	return entries, nil
}

// entries adds path's own entries that the page takes, newest first.
func (w *historyWalk) entries(path string) error {
	list, err := w.readDir(path)
	if err != nil {
		return err
	}
	var refs []historyRef
	for _, e := range list {
		if !e.Type().IsRegular() {
			continue
		}
		stem, pending, ok := parseEntryName(e.Name())
		if !ok {
			continue
		}
		key := path + " " + stem
		if strings.HasPrefix(key, w.prefix) && key > w.after {
			refs = append(refs, historyRef{key: key, path: path, name: e.Name(), pending: pending})
		}
	}
	// Names mostly sort as keys already; hex names and a pending twin of
	// a complete entry need the sort.
	slices.SortFunc(refs, func(a, b historyRef) int { return strings.Compare(a.key, b.key) })
	refs = slices.CompactFunc(refs, func(a, b historyRef) bool { return a.key == b.key })
	w.out = append(w.out, refs[:min(len(refs), w.limit-len(w.out))]...)
	return nil
}

// below adds the entries of the paths below path ("" for all), in key
// order: each child's own entries come under the key range child+" ", and
// the paths below it under child+"/"; no range's string starts another's,
// so sorting the ranges sorts their keys.
func (w *historyWalk) below(path string) error {
	list, err := w.readDir(path)
	if err != nil {
		return err
	}
	type span struct {
		start, child string
		deeper       bool
	}
	var spans []span
	for _, e := range list {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, entryPrefix) || reserved(name) != nil {
			continue
		}
		child := name
		if path != "" {
			child = path + "/" + name
		}
		spans = append(spans, span{child + " ", child, false}, span{child + "/", child, true})
	}
	slices.SortFunc(spans, func(a, b span) int { return strings.Compare(a.start, b.start) })
	for _, s := range spans {
		if w.full() {
			return nil
		}
		if !sharesPrefix(s.start, w.prefix) || (s.start < w.after && !strings.HasPrefix(w.after, s.start)) {
			continue // no key of the range is wanted, or all are before the page
		}
		if s.deeper {
			err = w.below(s.child)
		} else {
			err = w.entries(s.child)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
