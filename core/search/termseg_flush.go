// Writing the persisted term index: the flush lock, the flushes (a change
// segment, a merge, the whole index), and the sweep of orphan rows.

package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

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
// fi's manifest since fi last saw it (at most every manifestRecheck). Asked
// for while one is running, it runs again after it (if the interval
// allows), so a WaitIndexed after a search sees the manifest as it was at
// least when the search began. ti.mu is held.
func (ti *termIndex) recheckLocked(fi *folderIndex) {
	if fi.rechecking {
		fi.recheckAgain = true
		return
	}
	if time.Since(fi.lastSeen()) < ti.recheck {
		return
	}
	fi.rechecking = true
	ti.startLocked(func() {
		defer func() {
			ti.mu.Lock()
			fi.rechecking = false
			if fi.recheckAgain {
				// Asked for while this one read an older manifest: once
				// more (within the same wait: busy never drops to 0 here).
				fi.recheckAgain = false
				ti.recheckLocked(fi)
			}
			ti.mu.Unlock()
		}()
		// The store's background work on its index: observed as OpIndex,
		// as every driver call of the engine is observed under some
		// operation.
		ctx, o := ti.s.observe(ti.ctx, opIndex)
		var err error
		defer func() { o.done(err, false, 1) }()
		if err = ti.lockFlush(ctx); err != nil {
			return
		}
		defer ti.unlockFlush()
		var m *termManifest
		var version string
		m, version, err = ti.readManifest(ctx, fi.folder)
		if err == nil && ti.current(fi) {
			err = ti.sync(ctx, fi, m, version)
		}
		if errors.Is(err, errErased) {
			ti.drop(fi) // another store forgot the folder: nothing failed
			err = nil
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
