// Reading the persisted term index: what a flush captures of a folder,
// loading a folder's manifest and segments, and following other stores.

package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/internal/rowpath"
)

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
