// Building a folder's term index: the first search's build, its schedule,
// and the relisting and reconciling that find what changed behind it.

package search

import (
	"context"
	"math"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

// folder returns folder's index, ready, or nil while it is built in the
// background. The first search of a folder builds its index: within the
// search when the folder holds at most maxFiles files (reading them costs
// what scanning them would), in the background otherwise (the search then
// scans). A ready index is checked against the store in the background
// at most every reconcileEvery, for changes made behind its back.
//
// fresh are the files an in-place build read, when this call built fi: a
// search may take their content as read now.
func (ti *termIndex) folder(ctx context.Context, folder string, maxFiles int) (_ *folderIndex, fresh []driver.ScopeFile, _ error) {
	ti.mu.Lock()
	ti.clock++
	fi := ti.folders[folder]
	if fi != nil {
		fi.used = ti.clock
		if fi.isReady() && !fi.checking && time.Since(fi.checked) > reconcileAfter(fi.size()) {
			fi.checking = true
			ti.startLocked(func() { ti.reconcile(fi) })
		}
		if fi.isReady() {
			ti.recheckLocked(fi)
			ti.scheduleFlushLocked(fi) // changes a failed flush left
		}
		ti.mu.Unlock()
		select {
		case <-fi.listed: // the creator knows whether it builds in place
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if fi.inPlace {
			select {
			case <-fi.built:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if fi.isReady() {
			return fi, nil, nil
		}
		return nil, nil, nil
	}
	if ti.closed {
		ti.mu.Unlock()
		return nil, nil, nil
	}
	fi = &folderIndex{folder: folder, ids: map[string]int32{}, terms: map[string][]posting{}, dirty: map[string]uint64{},
		listed: make(chan struct{}), built: make(chan struct{}), used: ti.clock, checked: time.Now()}
	ti.folders[folder] = fi
	ti.mu.Unlock()

	// What an earlier process persisted, when there is that. A folder of
	// at most maxFiles files is then read as a search would scan it, and
	// only what changed is analysed again; a larger one is listed, and the
	// paths added or removed since are read by the searches as changes.
	loaded, err := ti.loadPersisted(ctx, fi)
	var files []driver.ScopeFile
	if err == nil && loaded && fi.size() <= maxFiles {
		files, err = ti.readFolder(ctx, folder, maxFiles+1)
	}
	listed := err == nil && loaded && (files == nil || len(files) > maxFiles)
	if listed {
		err = ti.relist(ctx, fi)
	}
	if err != nil {
		close(fi.listed)
		ti.drop(fi)
		close(fi.built)
		return nil, nil, err
	}
	if listed {
		ti.ready(fi)
		close(fi.listed)
		close(fi.built)
		return fi, nil, nil
	}
	if !loaded {
		files, err = ti.readFolder(ctx, folder, maxFiles+1)
	}
	if err != nil || len(files) > maxFiles {
		close(fi.listed)
		ti.mu.Lock()
		if err == nil && !ti.closed && ti.folders[folder] == fi {
			ti.startLocked(func() { ti.build(fi) })
		}
		ti.mu.Unlock()
		if err != nil {
			ti.drop(fi)
			close(fi.built)
			return nil, nil, err
		}
		return nil, nil, nil
	}
	fi.inPlace = true
	close(fi.listed)
	defer close(fi.built)
	ti.putFiles(lexis.NewScanner(), fi, files, loaded)
	ti.ready(fi)
	return fi, files, nil
}

// build indexes every file directly in fi's folder in the background,
// then the changes made meanwhile.
func (ti *termIndex) build(fi *folderIndex) {
	defer close(fi.built)
	ctx := ti.ctx
	err := ti.applyObserved(lexis.NewScanner(), fi, nil)
	if err != nil {
		if ctx.Err() == nil {
			ti.s.warn(ctx, "building the search index failed; searches of the folder scan it until a later search builds it", "", fi.folder, err)
		}
		ti.drop(fi)
		return
	}
	ti.ready(fi)
}

// ready marks fi built, applies the changes queued meanwhile, and
// writes what the build indexed.
func (ti *termIndex) ready(fi *folderIndex) {
	fi.mu.Lock()
	fi.ready = true
	fi.mu.Unlock()
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if len(ti.pending[fi.folder]) > 0 && !ti.feeding && !ti.closed {
		ti.feeding = true
		ti.startLocked(ti.feed)
	}
	ti.scheduleFlushLocked(fi)
}

// scheduleFlush is scheduleFlushLocked, taking ti.mu.
func (ti *termIndex) scheduleFlush(fi *folderIndex) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.scheduleFlushLocked(fi)
}

// relist lists fi's folder and queues the paths fi lacks or holds in vain
// (files written or deleted by a process that crashed before it wrote
// them to the persisted index, or behind the store's back): searches read
// them as changes until the feed applies them.
func (ti *termIndex) relist(ctx context.Context, fi *folderIndex) error {
	paths, err := ti.s.list(ctx, fi.folder, math.MaxInt, true)
	if err != nil {
		return err
	}
	there := make(map[string]bool, len(paths))
	var changed []string
	fi.mu.RLock()
	for _, p := range paths {
		there[p] = true
		if _, ok := fi.ids[p]; !ok {
			changed = append(changed, p)
		}
	}
	for p := range fi.ids {
		if !there[p] {
			changed = append(changed, p)
		}
	}
	fi.mu.RUnlock()
	for _, p := range changed {
		ti.changed(p)
	}
	return nil
}

// reconcile reads every file of fi's folder again and brings the index up
// to date with what changed behind the store's back (another process, a
// hand edit in a file store): new files added, changed ones indexed again,
// vanished ones removed.
func (ti *termIndex) reconcile(fi *folderIndex) {
	defer func() {
		ti.mu.Lock()
		fi.checking, fi.checked = false, time.Now()
		ti.mu.Unlock()
	}()
	ctx := ti.ctx
	err := ti.applyObserved(lexis.NewScanner(), fi, nil)
	if err != nil && ctx.Err() == nil {
		ti.s.warn(ctx, "checking the search index against the store failed; a later search tries again", "", fi.folder, err)
	}
}
