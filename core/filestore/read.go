package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentmem/agentmem/core/driver"
)

// ReadSnapshot implements driver.SnapshotReader: GetFile and ListFiles
// under one shared lock.
func (d *Driver) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	f, _, err := d.state(p.Path)
	if err != nil {
		return nil, nil, err
	}
	entries, err := d.list(p.List)
	if err != nil {
		return nil, nil, err
	}
	return f, entries, nil
}

// GetFiles implements driver.BatchGetter: every path under one shared
// lock, each read as GetFile reads it.
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := make([]*driver.File, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, _, err := d.state(p)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// ReadScope implements driver.ScopeReader: under one shared lock, one
// read of the scope's folder (its names, sorted) and a bounded read of
// each file directly in it (at most 4 bytes per rune of p.MaxChars, plus
// one rune), as ListFiles would list them: no temporary files, no
// folders, no links that leave the directory, no symlinked scope. A
// whole file's version and lifetime come from its record, which the
// version needs anyway; a cut file's lifetime from the folder's lifetime
// index, as ListFiles reads it.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	unlock, err := d.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	dirRel := strings.TrimSuffix(p.Prefix, "/")
	dir := filepath.Join(d.root, filepath.FromSlash(dirRel))
	if dirRel != "" {
		if err := reserved(dirRel); err != nil {
			return nil, nil
		}
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if real != dir {
			return nil, nil // a symlinked scope is never followed
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []driver.ScopeFile
	lr := lifetimeReader{d: d}
	for _, e := range entries { // sorted by name, so by path
		if len(out) == p.Limit {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := e.Name()
		rel := p.Prefix + name
		if e.IsDir() || name == SidecarDir || !Listed(rel) {
			continue
		}
		real := filepath.Join(dir, name)
		switch {
		case e.Type().IsRegular():
		case e.Type()&fs.ModeSymlink != 0:
			if real, err = d.target(rel); err != nil {
				continue // escaping links are never read
			}
			if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
				continue
			}
		default:
			continue
		}
		content, cut, fi, err := readPrefix(real, p.MaxChars)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f := driver.ScopeFile{Path: rel, Content: content, Truncated: cut}
		if !cut { // a whole file: its version and lifetime, as GetFile tells them
			var rec record
			ok, err := readJSON(d.recordPath(rel), &rec)
			if err != nil {
				return nil, err
			}
			if r := written(&rec, hashOf([]byte(content))); ok && r != nil {
				f.Version, f.Lifetime = r.Version, driver.LifetimeOf(r.Metadata)
			} else {
				f.Version = "ext-" + hashOf([]byte(content))[:32]
			}
		} else if f.Lifetime, err = lr.lifetime(rel, knownInfo{fi}); err != nil {
			return nil, err // a cut file: its lifetime from the index, as ListFiles tells it
		}
		out = append(out, f)
	}
	return out, nil
}

// readPrefix reads at most maxChars runes of the file at name (never more
// than 4×maxChars+4 bytes, which hold more than maxChars runes when the
// file is longer) and returns them with the file's stat.
func readPrefix(name string, maxChars int) (string, bool, fs.FileInfo, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", false, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(maxChars)*4+4))
	if err != nil {
		return "", false, nil, err
	}
	s, cut := driver.CutRunes(string(b), maxChars)
	return s, cut, fi, nil
}

// A listing reports each file's lifetime (driver.Entry.Lifetime), which
// lives in the metadata of the file's sidecar record; reading one record
// per listed file would make a listing several times slower. The lifetime
// index spares it: one small text file per folder,
// <sidecar>/lifetimes/<folder>/~index ("~" starts no path segment, so it
// never meets a folder's name), mapping the name of each file of the
// folder whose record has a lifetime, in itself or in the previous state
// it keeps, to that lifetime and to a fingerprint of the content the
// record wrote (size, modification time, inode). A listing reads the
// index of each folder it returns files of (a folder without one costs one
// failed open) and stats each file the index names: a file whose stat
// matches its fingerprint has the lifetime the index holds; any other (a
// hand edit, a crash before the content was renamed, an entry without a
// fingerprint) is read as GetFile reads it, record and content, which is
// always right. The index is a hint the listing checks, never a source of
// truth: a stale entry costs one read, and a missing one cannot happen
// (short of removing the index by hand). A corrupt index is read around
// (every file of its folder read as GetFile reads it) and rebuilt from the
// folder's records by the next write there.
//
// The primitive that writes a record (store) puts its entry first, with
// the fingerprint of the staged content, before the record and the
// rename; one whose record keeps no lifetime at all removes the entry
// after the rename (or after the delete). So a crash at any point leaves
// every file whose row may have a lifetime with an entry, and a crash
// before the rename leaves an entry whose fingerprint is the staged file's
// (another inode), which the listing checks. Files written before the
// index existed have no lifetime, and no entry.
//
// A stat is trusted only if the fingerprint's modification time is older
// than the index file's own (the racy-git rule): content is renamed into
// place after its entry's index file is written, so any later change of
// the file has a modification time at least the index file's, and a
// fingerprint older than that one cannot be matched by an edit. The
// staged content's time is set one microsecond back (backdate), so on a
// file system with finer times than that its fingerprint is always older.
// Where times are coarse (whole seconds), a fingerprint of the index
// file's tick is checked by content at every listing, until a later write
// of the folder's index, which first reads those files (after the new
// index file is written, so that nothing can slip in between) and clears
// the fingerprint of any that changed in place since. A change that keeps
// a file's size, modification time and inode (a copy that restores the
// times over the same inode) is not seen.
const (
	lifetimesDirName = "lifetimes"
	lifetimesName    = "~index"
)

// lifeEntry is a file's entry in its folder's lifetime index.
type lifeEntry struct {
	Expires, Pinned string // the record's lifetime
	// Size, MTime (nanoseconds) and Ino fingerprint the content the
	// record wrote; Size -1 means no fingerprint (a tombstone, or content
	// changed in place): the file is always read to tell its lifetime.
	Size  int64
	MTime int64
	Ino   uint64
}

func (e lifeEntry) lifetime() driver.Lifetime {
	return driver.Lifetime{Expires: e.Expires, Pinned: e.Pinned}
}

// matches reports whether fi is the file the fingerprint was taken of.
func (e lifeEntry) matches(fi fs.FileInfo) bool {
	return e.Size >= 0 && fi.Size() == e.Size && fi.ModTime().UnixNano() == e.MTime && inode(fi) == e.Ino
}

// lifetimeIndex is one folder's index as read.
type lifetimeIndex struct {
	entries map[string]lifeEntry // by file name
	mtime   int64                // the index file's modification time (ns); 0 when absent
	corrupt bool                 // unreadable as an index: every file is read, and a write rebuilds it
}

// trusted returns the lifetime of the file name whose stat is fi, and
// whether the index alone tells it (false: read the file).
func (ix lifetimeIndex) trusted(name string, fi fs.FileInfo) (driver.Lifetime, bool) {
	e, ok := ix.entries[name]
	if !ok {
		return driver.Lifetime{}, !ix.corrupt
	}
	if fi != nil && e.MTime < ix.mtime && e.matches(fi) {
		return e.lifetime(), true
	}
	return driver.Lifetime{}, false
}

// splitDir returns the folder ("" for the root) and the name of path.
func splitDir(p string) (string, string) {
	dir, name := path.Split(p)
	return strings.TrimSuffix(dir, "/"), name
}

func (d *Driver) lifetimesRoot() string { return filepath.Join(d.sidecar, lifetimesDirName) }

func (d *Driver) lifetimesPath(dir string) string {
	return filepath.Join(d.lifetimesRoot(), filepath.FromSlash(dir), lifetimesName)
}

// loadLifetimes reads the index of folder dir; a missing one is empty,
// and a corrupt one (which a listing reads around, file by file) is
// reported in its corrupt field, not as an error: the index is derived
// data, which a write rebuilds (loadToWrite).
func (d *Driver) loadLifetimes(dir string) (lifetimeIndex, error) {
	name := d.lifetimesPath(dir)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return lifetimeIndex{}, nil
	}
	if err != nil {
		return lifetimeIndex{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return lifetimeIndex{}, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return lifetimeIndex{}, err
	}
	entries, err := parseLifetimes(string(b))
	if err != nil {
		return lifetimeIndex{corrupt: true}, nil
	}
	return lifetimeIndex{entries: entries, mtime: fi.ModTime().UnixNano()}, nil
}

// The index file is text, read at every listing (a JSON decoder takes
// longer than the listing itself): a header line, then one line per file,
// sorted, of tab-separated fields: name, expiry, pin, size, modification
// time, inode. A name or value holding a tab, a newline, a quote or a
// backslash is written quoted (strconv.Quote).
const lifetimesHeader = "agentmem-lifetimes 1\n"

// formatLifetimes is the text of an index holding entries.
func formatLifetimes(entries map[string]lifeEntry) []byte {
	b := []byte(lifetimesHeader)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e := entries[name]
		b = fmt.Appendf(b, "%s\t%s\t%s\t%d\t%d\t%d\n", field(name), field(e.Expires), field(e.Pinned), e.Size, e.MTime, e.Ino)
	}
	return b
}

// parseLifetimes reads the text formatLifetimes writes.
func parseLifetimes(s string) (map[string]lifeEntry, error) {
	rest, ok := strings.CutPrefix(s, lifetimesHeader)
	if !ok {
		return nil, errors.New("no lifetime index header")
	}
	entries := make(map[string]lifeEntry, strings.Count(rest, "\n"))
	for line := range strings.Lines(rest) {
		var f [6]string
		r, n := strings.TrimSuffix(line, "\n"), 0
		for ; n < len(f)-1; n++ {
			var ok bool
			if f[n], r, ok = strings.Cut(r, "\t"); !ok {
				break
			}
		}
		if n != len(f)-1 || strings.Contains(r, "\t") {
			return nil, fmt.Errorf("bad line %q", line)
		}
		f[n] = r
		var e lifeEntry
		name, err := unfield(f[0])
		if err == nil {
			e.Expires, err = unfield(f[1])
		}
		if err == nil {
			e.Pinned, err = unfield(f[2])
		}
		if err == nil {
			e.Size, err = strconv.ParseInt(f[3], 10, 64)
		}
		if err == nil {
			e.MTime, err = strconv.ParseInt(f[4], 10, 64)
		}
		if err == nil {
			e.Ino, err = strconv.ParseUint(f[5], 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("bad line %q: %w", line, err)
		}
		entries[name] = e
	}
	return entries, nil
}

func field(s string) string {
	if strings.ContainsAny(s, "\t\n\r\"\\") {
		return strconv.Quote(s)
	}
	return s
}

func unfield(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// lifetimeReader resolves the lifetimes of one listing, reading each
// folder's index once. The caller holds the lock.
type lifetimeReader struct {
	d    *Driver
	read map[string]lifetimeIndex
}

// infoer gives a listed file's stat: an fs.DirEntry, or a knownInfo.
type infoer interface{ Info() (fs.FileInfo, error) }

// knownInfo is a stat already taken (a link's target's, an open file's).
type knownInfo struct{ fi fs.FileInfo }

func (k knownInfo) Info() (fs.FileInfo, error) { return k.fi, nil }

// lifetime returns the lifetime of the listed file rel; info gives its
// stat (the target's, for a link), asked only when the index names it.
func (r *lifetimeReader) lifetime(rel string, info infoer) (driver.Lifetime, error) {
	dir, name := splitDir(rel)
	ix, ok := r.read[dir]
	if !ok {
		var err error
		if ix, err = r.d.loadLifetimes(dir); err != nil {
			return driver.Lifetime{}, err
		}
		if r.read == nil {
			r.read = map[string]lifetimeIndex{}
		}
		r.read[dir] = ix
	}
	if _, named := ix.entries[name]; !named && !ix.corrupt {
		return driver.Lifetime{}, nil
	}
	fi, err := info.Info()
	if err != nil {
		fi = nil // gone meanwhile: read as GetFile would
	}
	if l, ok := ix.trusted(name, fi); ok {
		return l, nil
	}
	f, _, err := r.d.state(rel)
	if err != nil || f == nil || f.Tombstone {
		return driver.Lifetime{}, err
	}
	return driver.LifetimeOf(f.Metadata), nil
}
