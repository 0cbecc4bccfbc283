// The term index on disk: each folder's index persisted as segments, rows
// written through the driver's primitives under the folder's reserved
// segment TermSegment, so that a new process loads a folder's index from a
// few rows instead of reading and analysing every file, and processes that
// share a store see each other's changes.

package search

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/rowpath"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

// TermSegment is the folder, inside each folder whose files were searched,
// where the store keeps the persisted term index of those files: a
// manifest ("kamal/notes/.agentmem-terms/manifest") naming the live
// segments, and each segment's rows ("…/.agentmem-terms/<id>-1", "-2", …).
// Like [IndexSegment] its name starts with [rowpath.Reserved]: the
// rows are derived data, written through the driver's primitives, never
// listed, walked, searched or recorded in history as files, erased by
// store.Store.ForgetIndex and rebuilt after store.Store.Reindex.
//
// A segment lists files (their name, content sum and lengths, and their
// terms with frequencies) and files deleted; the manifest is replaced by a
// compare-and-swap on its version, after the rows it names are written, so
// a reader never follows it to a missing row. Changes since the last
// segment are written as a new one, a second after they land; past 8 of
// them they are merged into one, and once the files changed since the
// first (base) segment are a quarter of it, or the folder holds at most
// 1,000 files, the whole index is written again as one segment and the
// old rows are removed.
const TermSegment = rowpath.Reserved + "-terms"

// Bounds of the persisted term index.
const (
	// maxSegRowChars bounds one segment row's text (base64, so ASCII):
	// well under DynamoDB's 400 KB item limit with the row's keys.
	maxSegRowChars = 256_000
	// flushDelay is how long a folder's changes wait before they are
	// written as a segment: a burst of writes is written once.
	flushDelay = time.Second
	// maxDeltas is how many segments of changes a manifest names before
	// they are merged into one; wholeBelow is the folder size up to which
	// every flush writes the index whole (its estimated size in memory, 1 MB:
	// about 1,400 short notes, two or three rows). A larger
	// index is written whole again once the files changed since its base
	// segment are a quarter of the base's: each write is rewritten a
	// bounded number of times.
	maxDeltas  = 8
	wholeBelow = 1 << 20
	// maxBaseAge is how long a base segment may keep the words of files
	// deleted or rewritten since: a folder with changes whose base is
	// older is written whole again.
	maxBaseAge = 24 * time.Hour
	// maxSegRows bounds the rows a manifest may name for one segment.
	maxSegRows = 4096
	// manifestRecheck is how often, at most, a search looks for segments
	// another process wrote.
	manifestRecheck = time.Second
	// orphanAge is how old a segment row no manifest names must be before
	// it is removed: younger, it may be a writer's that has yet to
	// replace the manifest.
	orphanAge = 10 * time.Minute
	// maxFlushAttempts bounds the manifest swaps one flush tries while
	// other processes keep replacing it.
	maxFlushAttempts = 8
)

// segMagic starts every encoded segment (its format).
const segMagic = "AMT1"

// errSegment reports a segment or manifest that cannot be read as one.
var errSegment = errors.New("search: the persisted search index is unreadable")

// termManifest is the content of a folder's manifest row.
type termManifest struct {
	Format   int      `json:"format"`
	Segments []segRef `json:"segments"`
	// Checked is when the folder's files were last all read again
	// (reconcile): a process that loads the index keeps that schedule.
	Checked time.Time `json:"checked,omitzero"`
	// Analyzer is analyzerID() of the analyzer that made the segments: a
	// manifest of another one is unreadable (the index is built again).
	Analyzer string `json:"analyzer"`
}

// analyzerID fingerprints the analyzer (and the index's bounds): the
// terms it makes of a probe text that exercises folding, stemming, stop
// words and CJK, hashed. An analyzer that changes its terms changes it.
var analyzerID = sync.OnceValue(func() string {
	const probe = "Ünïcödé Running runners ran; the QUICK brown fox's jumps — naïve café 東京タワー 서울 Zürich 2026-12-01 e-mail."
	h := fnv.New64a()
	lexis.NewScanner().Each(probe, func(t string, _, _ int) {
		_, _ = io.WriteString(h, t)
		_, _ = io.WriteString(h, "\x00")
	})
	return fmt.Sprintf("lexis-%016x-%d", h.Sum64(), maxIndexedChars)
})

// segRef names one segment of a manifest.
type segRef struct {
	ID   string `json:"id"`
	Rows int    `json:"rows"`
	Docs int    `json:"docs"`
}

// fwdTerm is one term of a segment's file: its id in the segment's
// dictionary and its frequencies in body and name.
type fwdTerm struct {
	term       uint32
	body, name uint16
}

// fwdDoc is one file of a segment.
type fwdDoc struct {
	name             string // the file's name in its folder
	sum              uint64
	bodyLen, nameLen int32
	terms            []fwdTerm
}

// segment is a decoded segment: its term dictionary, files put and files
// deleted (names in the folder).
type segment struct {
	terms   []string
	docs    []fwdDoc
	deleted []string
}

// termRowsFolder is the folder of the persisted index of folder.
func termRowsFolder(folder string) string { return folder + TermSegment + "/" }

func manifestPath(folder string) string { return termRowsFolder(folder) + "manifest" }

func segRowPath(folder, id string, part int) string {
	return termRowsFolder(folder) + id + "-" + strconv.Itoa(part)
}

// isTermRow reports whether p is a row of a persisted term index:
// [folder/]TermSegment/name.
func isTermRow(p string) bool {
	dir, name := path.Split(p)
	parent, ok := strings.CutSuffix(dir, TermSegment+"/")
	if !ok || !rowpath.Valid(name) {
		return false
	}
	parent = strings.TrimSuffix(parent, "/")
	return parent == "" || rowpath.Valid(parent)
}

// encode returns seg in its binary form.
func (seg *segment) encode() []byte {
	var b []byte
	b = append(b, segMagic...)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(seg.terms)))
	for _, t := range seg.terms {
		str(t)
	}
	b = binary.AppendUvarint(b, uint64(len(seg.docs)))
	for _, d := range seg.docs {
		str(d.name)
		b = binary.LittleEndian.AppendUint64(b, d.sum)
		b = binary.AppendUvarint(b, uint64(d.bodyLen))
		b = binary.AppendUvarint(b, uint64(d.nameLen))
		b = binary.AppendUvarint(b, uint64(len(d.terms)))
		for _, t := range d.terms {
			b = binary.AppendUvarint(b, uint64(t.term))
			b = binary.AppendUvarint(b, uint64(t.body))
			b = binary.AppendUvarint(b, uint64(t.name))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(seg.deleted)))
	for _, name := range seg.deleted {
		str(name)
	}
	return b
}

// decodeSegment parses an encoded segment; anything malformed is
// errSegment.
func decodeSegment(b []byte) (*segment, error) {
	rest, ok := bytes.CutPrefix(b, []byte(segMagic))
	if !ok {
		return nil, errSegment
	}
	bad := false
	num := func(limit uint64) uint64 {
		v, n := binary.Uvarint(rest)
		if n <= 0 || v > limit {
			bad = true
			return 0
		}
		rest = rest[n:]
		return v
	}
	str := func() string {
		n := num(uint64(len(rest)))
		if bad || n > uint64(len(rest)) {
			bad = true
			return ""
		}
		s := string(rest[:n])
		rest = rest[n:]
		return s
	}
	seg := &segment{}
	nt := num(uint64(len(rest)))
	seg.terms = make([]string, 0, nt)
	for range nt {
		if seg.terms = append(seg.terms, str()); bad {
			return nil, errSegment
		}
	}
	nd := num(uint64(len(rest)))
	seg.docs = make([]fwdDoc, 0, nd)
	for range nd {
		d := fwdDoc{name: str()}
		if bad || len(rest) < 8 || !rowpath.ValidSegment(d.name) {
			return nil, errSegment
		}
		d.sum = binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		d.bodyLen, d.nameLen = int32(num(1<<31-1)), int32(num(1<<31-1))
		k := num(uint64(len(rest)))
		d.terms = make([]fwdTerm, 0, k)
		for range k {
			t := fwdTerm{term: uint32(num(uint64(len(seg.terms)) - 1)), body: uint16(num(maxTF)), name: uint16(num(maxTF))}
			d.terms = append(d.terms, t)
		}
		if bad || len(seg.terms) == 0 && k > 0 {
			return nil, errSegment
		}
		seg.docs = append(seg.docs, d)
	}
	ndel := num(uint64(len(rest)))
	for range ndel {
		if seg.deleted = append(seg.deleted, str()); bad || !rowpath.ValidSegment(seg.deleted[len(seg.deleted)-1]) {
			return nil, errSegment
		}
	}
	if bad || len(rest) != 0 {
		return nil, errSegment
	}
	return seg, nil
}

// capture returns the segment of fi's docs that want selects (the live
// ones; want nil: every live doc) and deleted, the names of files to
// record as gone. fi.mu is held (read).
func (fi *folderIndex) capture(want map[string]bool, deleted []string) *segment {
	seg := &segment{deleted: deleted}
	byDoc := map[int32]int{} // doc id → index in seg.docs
	for p, id := range fi.ids {
		if want != nil && !want[p] {
			continue
		}
		d := fi.docs[id]
		byDoc[id] = len(seg.docs)
		seg.docs = append(seg.docs, fwdDoc{name: path.Base(p), sum: d.sum, bodyLen: d.bodyLen, nameLen: d.nameLen})
	}
	if len(seg.docs) == 0 {
		return seg
	}
	for t, ps := range fi.terms {
		tid := -1
		for _, pt := range ps {
			i, ok := byDoc[pt.doc]
			if !ok || !fi.docs[pt.doc].live {
				continue
			}
			if tid < 0 {
				tid = len(seg.terms)
				seg.terms = append(seg.terms, t)
			}
			seg.docs[i].terms = append(seg.docs[i].terms, fwdTerm{term: uint32(tid), body: pt.body, name: pt.name})
		}
	}
	return seg
}

// captureDirty returns the segment of fi's changes not yet written (nil
// when there is none) and the change number it goes up to. fi.mu is held
// (read).
func (fi *folderIndex) captureDirty() (*segment, uint64) {
	if len(fi.dirty) == 0 {
		return nil, fi.dirtySeq
	}
	return fi.captureSet(dirtySet(fi.dirty)), fi.dirtySeq
}

// captureSet returns the segment of the paths in sets: those fi holds
// put, the others deleted. fi.mu is held (read).
func (fi *folderIndex) captureSet(sets ...map[string]bool) *segment {
	want := map[string]bool{}
	var deleted []string
	for _, set := range sets {
		for p := range set {
			if _, ok := fi.ids[p]; ok {
				want[p] = true
			} else {
				deleted = append(deleted, path.Base(p))
			}
		}
	}
	return fi.capture(want, slices.Compact(slices.Sorted(slices.Values(deleted))))
}

// load applies seg to fi: its deleted files go, its files replace what fi
// holds at their paths. It marks nothing dirty. The postings are added a
// term at a time (one map lookup per term of the segment, not per
// posting). fi.mu is held.
func (fi *folderIndex) load(seg *segment) {
	for _, name := range seg.deleted {
		fi.remove(fi.folder + name)
	}
	count := make([]int32, len(seg.terms))
	total := 0
	for _, d := range seg.docs {
		for _, t := range d.terms {
			count[t.term]++
		}
		total += len(d.terms)
	}
	// One backing array, each term's postings a capped window of it.
	backing := make([]posting, total)
	per := make([][]posting, len(seg.terms))
	off := 0
	for tid, n := range count {
		per[tid] = backing[off : off : off+int(n)]
		off += int(n)
	}
	for _, d := range seg.docs {
		p := fi.folder + d.name
		fi.remove(p)
		id := fi.addDoc(p, d.sum, d.bodyLen, d.nameLen, len(d.terms))
		for _, t := range d.terms {
			per[t.term] = append(per[t.term], posting{doc: id, body: t.body, name: t.name})
		}
	}
	for tid, ps := range per {
		if len(ps) == 0 {
			continue
		}
		t := seg.terms[tid]
		old, ok := fi.terms[t]
		if !ok {
			fi.bytes += int64(len(t)) + 64
			fi.terms[t] = ps
			continue
		}
		fi.terms[t] = append(old, ps...)
	}
	fi.maybeCompact()
}

// readManifest returns folder's manifest and its row's version, nil when
// there is none; a manifest that cannot be parsed is errSegment.
func (ti *termIndex) readManifest(ctx context.Context, folder string) (*termManifest, string, error) {
	row, err := ti.s.d.GetFile(ctx, manifestPath(folder))
	if err != nil || row == nil || row.Tombstone {
		return nil, "", err
	}
	var m termManifest
	if err := json.Unmarshal([]byte(row.Content), &m); err != nil || m.Format != 1 || m.Analyzer != analyzerID() {
		return nil, row.Version, fmt.Errorf("%w: the manifest of %q (or another analyzer's)", errSegment, folder)
	}
	for _, r := range m.Segments {
		if r.Rows < 1 || r.Rows > maxSegRows || r.Docs < 0 || !rowpath.ValidSegment(r.ID) || strings.Contains(r.ID, "-") {
			return nil, row.Version, fmt.Errorf("%w: the manifest of %q names a bad segment", errSegment, folder)
		}
	}
	return &m, row.Version, nil
}

// readSegments reads and decodes refs, in order.
func (ti *termIndex) readSegments(ctx context.Context, folder string, refs []segRef) ([]*segment, error) {
	var paths []string
	for _, r := range refs {
		for k := 1; k <= r.Rows; k++ {
			paths = append(paths, segRowPath(folder, r.ID, k))
		}
	}
	rows, err := ti.s.getFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	segs := make([]*segment, 0, len(refs))
	for _, r := range refs {
		var text strings.Builder
		text.Grow(r.Rows * maxSegRowChars)
		for k := 1; k <= r.Rows; k++ {
			row := rows[segRowPath(folder, r.ID, k)]
			if row == nil || row.Tombstone {
				return nil, fmt.Errorf("%w: segment %s of %q lacks row %d", errSegment, r.ID, folder, k)
			}
			text.WriteString(row.Content)
		}
		raw, err := base64.StdEncoding.DecodeString(text.String())
		if err != nil {
			return nil, fmt.Errorf("%w: segment %s of %q: %v", errSegment, r.ID, folder, err)
		}
		seg, err := decodeSegment(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: segment %s of %q", err, r.ID, folder)
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// loadPersisted fills fi, new and empty, from its folder's persisted
// index. It reports false when there is none (or it cannot be read: the
// folder is then built from its files, and its first flush replaces it).
func (ti *termIndex) loadPersisted(ctx context.Context, fi *folderIndex) (bool, error) {
	if err := ti.lockFlush(ctx); err != nil { // never beside an erasure or a flush
		return false, err
	}
	defer ti.unlockFlush()
	var m *termManifest
	var version string
	var segs []*segment
	var err error
	// Twice: a writer may have replaced the manifest, and removed the rows
	// it named, between the two reads.
	for range 2 {
		m, version, err = ti.readManifest(ctx, fi.folder)
		if err != nil || m == nil {
			break
		}
		if segs, err = ti.readSegments(ctx, fi.folder, m.Segments); !errors.Is(err, errSegment) {
			break
		}
	}
	if err == nil && m != nil {
		fi.mu.Lock()
		for i, seg := range segs {
			fi.load(seg)
			if i > 0 {
				fi.noteDelta(seg)
			}
		}
		fi.segs, fi.manifest, fi.seen = slices.Clone(m.Segments), version, time.Now()
		size := fi.bytes
		fi.mu.Unlock()
		ti.resized(fi, size)
		if !m.Checked.IsZero() && m.Checked.Before(time.Now()) {
			ti.mu.Lock()
			fi.checked = m.Checked
			ti.mu.Unlock()
		}
		return true, nil
	}
	if errors.Is(err, errSegment) {
		ti.s.warn(ctx, "the persisted search index is unreadable; the folder's index is built from its files and written again", "", fi.folder, err)
		fi.mu.Lock()
		fi.needBase = true
		fi.mu.Unlock()
		return false, nil
	}
	return false, err
}

// errErased reports that a folder's persisted index was erased (by
// Forget, ForgetIndex or Reindex, perhaps in another process) since fi
// read it: fi is dropped, never written back.
var errErased = errors.New("search: the folder's persisted search index was erased")

// sync brings fi up to date with manifest m (at version): the segments m
// names that fi lacks are applied, and when m no longer extends what fi
// holds (another process wrote the index whole) fi is loaded from m
// afresh. Then fi's own changes not yet written (captured now, under the
// lock, so none applied meanwhile is undone) are applied again on top.
// When fi had read a manifest and m is gone, the index was erased:
// errErased. ti.flush is held.
func (ti *termIndex) sync(ctx context.Context, fi *folderIndex, m *termManifest, version string) error {
	fi.mu.RLock()
	have, same, had := fi.segs, fi.manifest == version, fi.manifest != ""
	fi.mu.RUnlock()
	if m == nil && had {
		return errErased
	}
	if same || m == nil {
		return nil
	}
	extends := len(m.Segments) >= len(have)
	for i := range have {
		extends = extends && m.Segments[i].ID == have[i].ID
	}
	// The same base with its changes merged (by a writer that had applied
	// every segment fi holds): the merged segments apply over fi as it is.
	sameBase := !extends && len(have) > 0 && len(m.Segments) > 0 && m.Segments[0].ID == have[0].ID
	todo := m.Segments
	switch {
	case extends:
		todo = m.Segments[len(have):]
	case sameBase:
		todo = m.Segments[1:]
	}
	segs, err := ti.readSegments(ctx, fi.folder, todo)
	if err != nil {
		return err
	}
	fi.mu.Lock()
	ours, _ := fi.captureDirty()
	first := len(have) // m's index of segs[0]
	switch {
	case sameBase:
		first = 1
	case !extends:
		fi.reset()
		clear(fi.sinceBase)
		first = 0
	}
	for i, seg := range segs {
		fi.load(seg)
		if first+i > 0 {
			fi.noteDelta(seg)
		} else {
			clear(fi.sinceBase) // a new base
		}
	}
	if ours != nil {
		fi.load(ours)
	}
	fi.segs, fi.manifest, fi.seen = slices.Clone(m.Segments), version, time.Now()
	size := fi.bytes
	fi.mu.Unlock()
	ti.resized(fi, size)
	return nil
}

// lockFlush takes ti.flush (the one lock of every folder's flushes,
// manifest reads and erasures) unless ctx ends first.
func (ti *termIndex) lockFlush(ctx context.Context) error {
	select {
	case ti.flushLock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (ti *termIndex) unlockFlush() { <-ti.flushLock }

// scheduleFlushLocked writes fi's changes as a segment flushDelay from
// now (at once while someone waits for the index), unless a flush is
// already scheduled or fi is not built yet (ready schedules one). ti.mu
// is held.
func (ti *termIndex) scheduleFlushLocked(fi *folderIndex) {
	if fi.flushQueued || ti.closed || ti.folders[fi.folder] != fi || !fi.isReady() || !fi.unwritten() {
		return
	}
	fi.flushQueued = true
	hurry, now := ti.hurry, ti.waiting > 0
	ti.startLocked(func() {
		if !now {
			t := time.NewTimer(flushDelay)
			select {
			case <-t.C:
			case <-hurry:
			case <-ti.ctx.Done():
			}
			t.Stop()
		}
		ti.mu.Lock()
		fi.flushQueued = false
		ti.mu.Unlock()
		if err := ti.flush(ti.ctx, fi); err != nil && ti.ctx.Err() == nil {
			ti.s.warn(ti.ctx, "writing the search index failed; a later change or search writes it", "", fi.folder, err)
		}
	})
}

// flushAll writes every folder's changes not yet written, within ctx:
// Shutdown and Close call it before they stop the index.
func (ti *termIndex) flushAll(ctx context.Context) {
	ti.mu.Lock()
	var todo []*folderIndex
	for _, fi := range ti.folders {
		todo = append(todo, fi)
	}
	ti.mu.Unlock()
	sc := lexis.NewScanner()
	for _, fi := range todo {
		if ctx.Err() != nil {
			return
		}
		if !fi.isReady() {
			continue
		}
		// The changes the feed has not applied yet first.
		err := ti.apply(ctx, sc, fi, ti.pendingIn(fi.folder))
		if err == nil {
			err = ti.flush(ctx, fi)
		}
		if err != nil && ctx.Err() == nil {
			ti.s.warn(ctx, "writing the search index at shutdown failed; the next process finds the changes by checking the folder", "", fi.folder, err)
		}
	}
}

// flush writes fi's changes since its last flush (its dirty paths) as a
// segment and adds it to the folder's manifest, or writes the whole index
// as one segment when the manifest names too many (or none, or cannot be
// read). Writes from other processes that landed meanwhile are applied to
// fi first (sync).
func (ti *termIndex) flush(ctx context.Context, fi *folderIndex) (err error) {
	ctx, o := ti.s.observe(ctx, opIndex)
	written := 0
	defer func() { o.done(err, false, written) }()
	if err := ti.lockFlush(ctx); err != nil {
		return err
	}
	defer ti.unlockFlush()
	for range maxFlushAttempts {
		if !ti.current(fi) {
			return nil
		}
		fi.mu.RLock()
		need, ready, dirty := fi.needBase, fi.ready, len(fi.dirty)
		fi.mu.RUnlock()
		if !ready || dirty == 0 && !need {
			return nil
		}
		m, version, err := ti.readManifest(ctx, fi.folder)
		if errors.Is(err, errSegment) {
			m, need, err = nil, true, nil // written again whole, over the unreadable one
		}
		if err != nil {
			return err
		}
		switch err := ti.sync(ctx, fi, m, version); {
		case errors.Is(err, errErased):
			ti.drop(fi) // built again from the files by the next search
			return nil
		case errors.Is(err, errSegment):
			m, need = nil, true
		case err != nil:
			return err
		}
		fi.mu.RLock()
		ours, seq := fi.captureDirty()
		fi.mu.RUnlock()
		// Whole (a small folder, or a quarter of it changed since the
		// base segment), the segments of changes merged into one (past
		// maxDeltas), or only these changes.
		fi.mu.RLock()
		whole := need || m == nil || len(m.Segments) == 0 || fi.bytes <= wholeBelow ||
			len(fi.sinceBase)+ours.size() > m.Segments[0].Docs/4 || baseStale(m.Segments[0], ti.s.now())
		merge := !whole && len(m.Segments) > maxDeltas
		seg := ours
		switch {
		case whole:
			seg = fi.capture(nil, nil)
		case merge:
			seg = fi.captureSet(fi.sinceBase, dirtySet(fi.dirty))
		}
		fi.mu.RUnlock()
		id := ulid.New(ti.s.now())
		rows, err := ti.writeSegment(ctx, fi.folder, id, seg)
		if err != nil {
			return err
		}
		ref := segRef{ID: id, Rows: rows, Docs: len(seg.docs)}
		var next termManifest
		ti.mu.Lock()
		next.Format, next.Checked, next.Analyzer = 1, fi.checked.UTC(), analyzerID()
		ti.mu.Unlock()
		switch {
		case whole:
			next.Segments = []segRef{ref}
		case merge:
			next.Segments = []segRef{m.Segments[0], ref}
		default:
			next.Segments = append(slices.Clone(m.Segments), ref)
		}
		content, _ := json.Marshal(next)
		newVer := ulid.New(ti.s.now())
		mrow := driver.File{Path: manifestPath(fi.folder), Content: string(content), Version: newVer}
		if version == "" {
			err = ti.s.d.CreateFile(ctx, mrow)
		} else {
			err = ti.s.d.ReplaceFile(ctx, mrow, version)
		}
		if errors.Is(err, driver.ErrPrecondition) {
			ti.removeRows(ctx, fi.folder, []segRef{ref}) // never named: gone at once
			continue                                     // another process swapped it first: again, over theirs
		}
		if err != nil {
			return err
		}
		written = seg.size()
		fi.mu.Lock()
		fi.segs, fi.manifest, fi.seen = next.Segments, newVer, time.Now()
		if whole {
			fi.needBase = false
			clear(fi.sinceBase)
		} else {
			fi.noteDelta(ours)
		}
		for p, s := range fi.dirty {
			if s <= seq {
				delete(fi.dirty, p)
			}
		}
		fi.mu.Unlock()
		switch {
		case whole && m != nil:
			ti.removeRows(ctx, fi.folder, m.Segments)
		case merge:
			ti.removeRows(ctx, fi.folder, m.Segments[1:])
		}
		if whole {
			ti.sweep(ctx, fi.folder, next.Segments)
		}
		return nil
	}
	return fmt.Errorf("search: the manifest of the search index of %q kept changing; the next flush tries again", fi.folder)
}

// baseStale reports whether base, a manifest's first segment, is older
// than maxBaseAge.
func baseStale(base segRef, now time.Time) bool {
	t, ok := ulid.Time(base.ID)
	return ok && now.Sub(t) > maxBaseAge
}

// size is the number of files seg puts or deletes (0 for nil).
func (seg *segment) size() int {
	if seg == nil {
		return 0
	}
	return len(seg.docs) + len(seg.deleted)
}

// noteDelta records the paths seg (a segment after the base) changes. fi.mu
// is held.
func (fi *folderIndex) noteDelta(seg *segment) {
	if seg == nil {
		return
	}
	if fi.sinceBase == nil {
		fi.sinceBase = map[string]bool{}
	}
	for _, d := range seg.docs {
		fi.sinceBase[fi.folder+d.name] = true
	}
	for _, name := range seg.deleted {
		fi.sinceBase[fi.folder+name] = true
	}
}

// dirtySet is the paths of dirty.
func dirtySet(dirty map[string]uint64) map[string]bool {
	out := make(map[string]bool, len(dirty))
	for p := range dirty {
		out[p] = true
	}
	return out
}

// writeSegment writes seg's rows (created: an id is never reused) and
// returns their number.
func (ti *termIndex) writeSegment(ctx context.Context, folder, id string, seg *segment) (int, error) {
	text := base64.StdEncoding.EncodeToString(seg.encode())
	rows := 0
	for len(text) > 0 || rows == 0 {
		part := text[:min(len(text), maxSegRowChars)]
		text = text[len(part):]
		rows++
		f := driver.File{Path: segRowPath(folder, id, rows), Content: part, Version: ulid.New(ti.s.now())}
		if err := ti.s.d.CreateFile(ctx, f); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// removeRows deletes the rows of refs (best effort: a row left behind is
// an orphan the next whole write sweeps).
func (ti *termIndex) removeRows(ctx context.Context, folder string, refs []segRef) {
	for _, r := range refs {
		for k := 1; k <= r.Rows; k++ {
			_, _ = ti.s.deleteRow(ctx, segRowPath(folder, r.ID, k))
		}
	}
}

// sweep removes the segment rows of folder that live names none of and
// that are older than orphanAge (those of a flush that crashed before it
// replaced the manifest, or that lost the swap and could not clean up).
func (ti *termIndex) sweep(ctx context.Context, folder string, live []segRef) {
	keep := map[string]bool{}
	for _, r := range live {
		keep[r.ID] = true
	}
	prefix := termRowsFolder(folder)
	entries, err := ti.s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, Limit: pageSize})
	if err != nil {
		return
	}
	cutoff := ti.s.now().Add(-orphanAge)
	for _, e := range entries {
		name := strings.TrimPrefix(e.Path, prefix)
		id, _, ok := strings.Cut(name, "-")
		if !ok || keep[id] || e.Tombstone {
			continue
		}
		if t, ok := ulid.Time(id); !ok || t.After(cutoff) {
			continue
		}
		_, _ = ti.s.deleteRow(ctx, e.Path)
	}
}

// current reports whether fi is still its folder's index.
func (ti *termIndex) current(fi *folderIndex) bool {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return !ti.closed && ti.folders[fi.folder] == fi
}

// recheck looks, in the background, for segments other processes added to
// fi's manifest since fi last saw it (at most every manifestRecheck).
// ti.mu is held.
func (ti *termIndex) recheckLocked(fi *folderIndex) {
	if fi.rechecking || time.Since(fi.lastSeen()) < ti.recheck {
		return
	}
	fi.rechecking = true
	ti.startLocked(func() {
		defer func() {
			ti.mu.Lock()
			fi.rechecking = false
			ti.mu.Unlock()
		}()
		ctx := ti.ctx
		if ti.lockFlush(ctx) != nil {
			return
		}
		defer ti.unlockFlush()
		m, version, err := ti.readManifest(ctx, fi.folder)
		if err == nil && ti.current(fi) {
			err = ti.sync(ctx, fi, m, version)
		}
		if errors.Is(err, errErased) {
			ti.drop(fi)
			return
		}
		fi.mu.Lock()
		fi.seen = time.Now()
		fi.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			ti.s.warn(ctx, "reading the search index another process wrote failed; a later search tries again", "", fi.folder, err)
		}
	})
}

// unwritten reports whether fi has changes (or a whole index) to write.
func (fi *folderIndex) unwritten() bool {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return len(fi.dirty) > 0 || fi.needBase
}

func (fi *folderIndex) lastSeen() time.Time {
	fi.mu.RLock()
	defer fi.mu.RUnlock()
	return fi.seen
}
