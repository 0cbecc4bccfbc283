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
		content, cut, err := readPrefix(real, p.MaxChars)
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
			recp := &rec
			if !ok {
				recp = nil
			}
			var meta map[string]string
			if f.Version, _, meta, err = d.row(rel, recp, hashOf([]byte(content))); err != nil {
				return nil, err
			}
			f.Lifetime = driver.LifetimeOf(meta)
		} else if f.Lifetime, err = lr.lifetime(rel); err != nil {
			return nil, err // a cut file: its lifetime from the index, as ListFiles tells it
		}
		out = append(out, f)
	}
	return out, nil
}

// readPrefix reads at most maxChars runes of the file at name (never more
// than 4×maxChars+4 bytes, which hold more than maxChars runes when the
// file is longer).
func readPrefix(name string, maxChars int) (string, bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(maxChars)*4+4))
	if err != nil {
		return "", false, err
	}
	s, cut := driver.CutRunes(string(b), maxChars)
	return s, cut, nil
}

// A listing reports each file's lifetime (driver.Entry.Lifetime), which
// lives in the metadata of the file's sidecar record; reading one record
// per listed file would make a listing several times slower. The lifetime
// index spares it: one small text file per folder,
// <sidecar>/lifetimes/<folder>/~index ("~" starts no path segment, so it
// never meets a folder's name), mapping the name of each file of the
// folder whose record has a lifetime to that lifetime, each entry
// settled or pending. A listing reads the index of each folder it returns
// files of (a folder without one costs one failed open; the text is
// parsed once while it stays the same, Driver.parsed), walks its lines as
// it asks about the folder's files in name order (indexCursor), and
// trusts a settled entry as it stands, touching no file: a file without
// one has no lifetime. It reads a file with a pending entry as GetFile
// reads it, record and content, which is always right, and so every file
// of a corrupt index's folder (no header; from a bad line on). The index
// is true whenever no write is under way; what it cannot see is a change
// of the sidecar by hand (a record edited or removed, the index removed).
//
// Settled entries can be trusted because GetFile's lifetime follows the
// record alone: content the record wrote has the record's lifetime, and
// so does content changed by hand (a hand edit keeps the file's expiry
// and pin; see Driver.row). The one exception is content the record's
// previous state wrote, which a crash between the record and the rename
// leaves in place: it is read as that state, lifetime included, when the
// path's entry is pending, and as a hand edit (the bytes put back by hand)
// when it is not.
//
// The primitive that writes a record (store, and DeleteFile) marks the
// path's entry pending, with the lifetime it will have, before the record
// and the content change, and after them settles it (or drops it when the
// new state has no lifetime); when the lifetime stays what the index
// holds, it writes no index at all, since every state a crash could leave
// reads as that lifetime. Writers hold the exclusive lock and listings
// the shared one, so a pending entry a listing sees is a write that
// crashed. The next write of the folder's index settles such entries by
// reading their files (settle), but for one whose content is still the
// previous state's: that stays pending, read at each listing, until its
// file's next change (an unreadable record or file stays pending too, so
// that listings report it). A corrupt index is rebuilt from the folder's
// records and files by the next write there. Files written before the
// index existed have no lifetime, and no entry. An index written by an
// earlier version of this driver (another header) reads as corrupt.
const (
	lifetimesDirName = "lifetimes"
	lifetimesName    = "~index"
)

// lifeEntry is a file's entry in its folder's lifetime index.
type lifeEntry struct {
	Expires, Pinned string // the record's lifetime
	// Pending marks a write under way (or one that crashed): the file is
	// read to tell its lifetime.
	Pending bool
}

func (e lifeEntry) lifetime() driver.Lifetime {
	return driver.Lifetime{Expires: e.Expires, Pinned: e.Pinned}
}

// lifetimeIndex is one folder's index as read.
type lifetimeIndex struct {
	entries map[string]lifeEntry // by file name
	corrupt bool                 // unreadable as an index: every file is read, and a write rebuilds it
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
	b, err := os.ReadFile(d.lifetimesPath(dir))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return lifetimeIndex{}, nil
	}
	if err != nil {
		return lifetimeIndex{}, err
	}
	entries, err := parseLifetimes(string(b))
	if err != nil {
		return lifetimeIndex{corrupt: true}, nil
	}
	return lifetimeIndex{entries: entries}, nil
}

// lifetimePending reports whether the lifetime index leaves the lifetime
// of path to its file: its entry is pending, or the index corrupt.
func (d *Driver) lifetimePending(p string) (bool, error) {
	dir, name := splitDir(p)
	ix, err := d.loadLifetimes(dir)
	return ix.corrupt || ix.entries[name].Pending, err
}

// The index file is text, read at every listing (a JSON decoder takes
// longer than the listing itself): a header line, then one line per file,
// sorted, of tab-separated fields: name, expiry, pin, and "s" (settled)
// or "p" (pending). A name or value holding a tab, a newline, a quote or
// a backslash is written quoted (strconv.Quote). Version 1 (which held a
// fingerprint of each file's content instead of its state) reads as
// corrupt.
const lifetimesHeader = "agentmem-lifetimes 2\n"

// formatLifetimes is the text of an index holding entries.
func formatLifetimes(entries map[string]lifeEntry) []byte {
	b := []byte(lifetimesHeader)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e := entries[name]
		state := "s"
		if e.Pending {
			state = "p"
		}
		b = fmt.Appendf(b, "%s\t%s\t%s\t%s\n", field(name), field(e.Expires), field(e.Pinned), state)
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
	for rest != "" {
		name, e, next, err := parseLifetimeLine(rest)
		if err != nil {
			return nil, err
		}
		entries[name], rest = e, next
	}
	return entries, nil
}

// parseLifetimeLine reads the first line of s, an index line, and returns
// its name and entry, and the lines after it.
func parseLifetimeLine(s string) (name string, e lifeEntry, rest string, err error) {
	end := strings.IndexByte(s, '\n')
	if end < 0 {
		return "", e, "", badLine(s)
	}
	line := s[:end]
	var f [3]string
	r := line
	for n := range f {
		i := strings.IndexByte(r, '\t')
		if i < 0 {
			return "", e, "", badLine(s)
		}
		f[n], r = r[:i], r[i+1:]
	}
	if r != "s" && r != "p" {
		return "", e, "", badLine(s)
	}
	e.Pending = r == "p"
	name, e.Expires, e.Pinned = f[0], f[1], f[2]
	if quoted(name) || quoted(e.Expires) || quoted(e.Pinned) {
		if name, err = unfield(name); err == nil {
			if e.Expires, err = unfield(e.Expires); err == nil {
				e.Pinned, err = unfield(e.Pinned)
			}
		}
		if err != nil {
			return "", e, "", fmt.Errorf("%w: %w", badLine(s), err)
		}
	}
	return name, e, s[end+1:], nil
}

// quoted reports whether an index field is written quoted.
func quoted(f string) bool { return len(f) > 0 && f[0] == '"' }

// badLine is the error of an index line that is not one (the first line
// of s).
func badLine(s string) error {
	line, _, _ := strings.Cut(s, "\n")
	return fmt.Errorf("bad line %q", line)
}

func field(s string) string {
	if strings.ContainsAny(s, "\t\n\r\"\\") {
		return strconv.Quote(s)
	}
	return s
}

func unfield(s string) (string, error) {
	if quoted(s) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// lifetimeReader resolves the lifetimes of one listing, reading each
// folder's index once. The caller holds the lock.
type lifetimeReader struct {
	d       *Driver
	read    map[string]*indexCursor // by folder
	lastDir string                  // the folder of the last file asked about, and its cursor
	last    *indexCursor
}

// parsedIndex is the text of one folder's index and its lines, in name
// order, as parsed once; listings share it and never change it.
type parsedIndex struct {
	text    string
	lines   []indexLine
	corrupt bool // no header, or a bad line after lines: a name past them is not known
}

// indexLine is one line of an index.
type indexLine struct {
	name string
	e    lifeEntry
}

// parseIndex parses the text of an index for listings.
func parseIndex(text string) *parsedIndex {
	body, ok := strings.CutPrefix(text, lifetimesHeader)
	p := &parsedIndex{text: text, corrupt: !ok}
	if !ok {
		return p
	}
	p.lines = make([]indexLine, 0, strings.Count(body, "\n"))
	for body != "" {
		name, e, rest, err := parseLifetimeLine(body)
		if err != nil {
			p.corrupt = true
			break
		}
		p.lines, body = append(p.lines, indexLine{name, e}), rest
	}
	return p
}

// maxParsedIndexes bounds the parsed indexes a Driver keeps.
const maxParsedIndexes = 64

// parsed returns the index whose text, read from the file name, is b:
// the one parsed last time when its text is the same (so a folder's
// listings parse its index once between changes), else b parsed now.
func (d *Driver) parsed(name string, b []byte) *parsedIndex {
	d.indexes.Lock()
	defer d.indexes.Unlock()
	if p := d.indexes.m[name]; p != nil && p.text == string(b) {
		return p
	}
	p := parseIndex(string(b))
	if d.indexes.m == nil || len(d.indexes.m) >= maxParsedIndexes {
		d.indexes.m = map[string]*parsedIndex{}
	}
	d.indexes.m[name] = p
	return p
}

// indexCursor reads a folder's index for one listing, which asks about
// the folder's files in name order (the order of the index's lines); a
// name asked out of order starts again from the top.
type indexCursor struct {
	ix    *parsedIndex // nil: the folder has no index
	at    int          // the first line after the name asked last
	asked string       // the name asked last
}

// entry returns the entry of the file name, whether the index names it,
// and whether it knows (false: a corrupt index, which does not).
func (c *indexCursor) entry(name string) (e lifeEntry, named, known bool) {
	if c.ix == nil {
		return lifeEntry{}, false, true
	}
	if name <= c.asked {
		c.at = 0
	}
	c.asked = name
	for lines := c.ix.lines; c.at < len(lines); c.at++ {
		if l := &lines[c.at]; l.name >= name {
			if l.name != name {
				return lifeEntry{}, false, true
			}
			c.at++
			return l.e, true, true
		}
	}
	return lifeEntry{}, false, !c.ix.corrupt
}

// cursor returns the cursor of folder dir's index.
func (r *lifetimeReader) cursor(dir string) (*indexCursor, error) {
	if r.last != nil && r.lastDir == dir {
		return r.last, nil
	}
	c, ok := r.read[dir]
	if !ok {
		name := r.d.lifetimesPath(dir)
		b, err := readSmall(name)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			c = &indexCursor{}
		case err != nil:
			return nil, err
		default:
			c = &indexCursor{ix: r.d.parsed(name, b)}
		}
		if r.read == nil {
			r.read = map[string]*indexCursor{}
		}
		r.read[dir] = c
	}
	r.lastDir, r.last = dir, c
	return c, nil
}

// lifetime returns the lifetime of the listed file rel: its settled
// entry's, none without an entry, or (a pending entry, a corrupt index)
// the lifetime GetFile reads.
func (r *lifetimeReader) lifetime(rel string) (driver.Lifetime, error) {
	dir, name := splitDir(rel)
	c, err := r.cursor(dir)
	if err != nil {
		return driver.Lifetime{}, err
	}
	e, named, known := c.entry(name)
	switch {
	case named && !e.Pending:
		return e.lifetime(), nil
	case !named && known:
		return driver.Lifetime{}, nil
	}
	f, _, err := r.d.state(rel)
	if err != nil || f == nil || f.Tombstone {
		return driver.Lifetime{}, err
	}
	return driver.LifetimeOf(f.Metadata), nil
}
