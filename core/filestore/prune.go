package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// The expiry index lets PruneExpired find what expired without reading
// every receipt and sidecar record. It is a directory of empty marker
// files, <sidecar>/expiry/<minute>/<time>-<kind>-<key>, one per receipt or
// tombstone with an expiry: the folder names the UTC minute, the file name
// the exact expiry time, so names sort by time and a prune reads only the
// folders whose minute has begun. A marker is a hint: the prune checks the
// receipt or record it names under the lock before removing anything, and
// a marker whose row changed or vanished is simply dropped. Markers are
// written before the row they describe, so a crash never leaves an
// expiring row without one.
const (
	expiryDir    = "expiry"
	bucketLayout = "20060102T1504"
	markerLayout = "20060102T150405.000000000"
	kindReceipt  = "r"
	kindTomb     = "t"
)

// DefaultPruneBatch is how many expiry markers [Driver.PruneExpired]
// settles per hold of the exclusive lock, at most; a batch also ends once
// it has held the lock for [PruneBatchTime]. Other callers run between
// batches.
const DefaultPruneBatch = 64

// PruneBatchTime bounds how long one prune batch holds the exclusive lock
// (it settles at least one marker). Callers in the same process that wait
// meanwhile are served before the next batch (see lock). After each batch
// the prune pauses as long as the batch took, lock and freeing of the
// removed files included (at most maxPrunePause): other processes
// waiting on the file lock get it, and the prune keeps the disk busy at
// most half the time. Freeing files is what slows other writers' own disk
// operations (where the file system discards freed blocks, as ext4
// mounted with -o discard does, every removal waits for the device), and
// the pause grows when the disk is slow.
const PruneBatchTime = time.Millisecond

// maxPrunePause is the longest pause of a prune between two batches (see
// PruneBatchTime).
const maxPrunePause = 50 * time.Millisecond

func (d *Driver) expiryRoot() string { return filepath.Join(d.sidecar, expiryDir) }

// markerPath is the marker of a row that expires at: kind "r" with the
// receipt's file key, or kind "t" with the hash of a tombstone's path.
func (d *Driver) markerPath(at time.Time, kind, key string) string {
	at = at.UTC()
	return filepath.Join(d.expiryRoot(), at.Format(bucketLayout), at.Format(markerLayout)+"-"+kind+"-"+key)
}

// receiptKey is the name of a receipt's file without ".json".
func receiptKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// markReceipt writes the marker of receipt r unless cur (the stored
// receipt, or nil) already expires at the same time.
func (d *Driver) markReceipt(r driver.Receipt, cur *driver.Receipt) error {
	if r.ExpiresAt.IsZero() || (cur != nil && cur.ExpiresAt.Equal(r.ExpiresAt)) {
		return nil
	}
	return writeMarker(d.markerPath(r.ExpiresAt, kindReceipt, receiptKey(r.ID)), nil)
}

// markTombstone writes the marker of a tombstone at path; the marker holds
// the path, since a file name cannot.
func (d *Driver) markTombstone(path string, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	return writeMarker(d.markerPath(at, kindTomb, receiptKey(path)), []byte(path))
}

// writeMarker writes a marker file, making its minute's folder. A prune
// removes an emptied folder without the lock (see pruneBucket), so the
// folder may vanish between its creation and the marker's: the write is
// then tried again, a few times (each failure means a prune emptied the
// folder meanwhile). A marker is written before its row, so a writer that
// still fails has written nothing.
func writeMarker(name string, data []byte) error {
	for try := 1; ; try++ {
		err := writeMarkerOnce(name, data)
		if err == nil || try == 4 || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

func writeMarkerOnce(name string, data []byte) error {
	if data == nil {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		return f.Close()
	}
	return writeAtomic(name, data) // never a half-written path
}

// marker is one parsed marker file name.
type marker struct {
	name string // full file name
	at   time.Time
	kind string
	key  string
}

func parseMarker(dir, base string) (marker, bool) {
	t, rest, ok := strings.Cut(base, "-")
	if !ok {
		return marker{}, false
	}
	kind, key, ok := strings.Cut(rest, "-")
	if !ok || (kind != kindReceipt && kind != kindTomb && kind != kindHistory) || len(key) != 64 {
		return marker{}, false
	}
	at, err := time.Parse(markerLayout, t)
	if err != nil {
		return marker{}, false
	}
	return marker{name: filepath.Join(dir, base), at: at, kind: kind, key: key}, true
}

// PruneExpired implements driver.Pruner: it removes the receipts and
// tombstone records that expired before now. The expiry index names them,
// so a prune costs what expired (nothing expired: one read of the index
// folder), and it holds the exclusive lock for at most
// [DefaultPruneBatch] rows and [PruneBatchTime] at a time, so other
// callers' reads and writes wait for one batch at most. Under the lock a
// removed row is only moved aside; freeing its file, and removing a
// minute's emptied folder, happen after the lock is released.
func (d *Driver) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	buckets, err := os.ReadDir(d.expiryRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range buckets {
		start, err := time.Parse(bucketLayout, b.Name())
		if err != nil || !b.IsDir() {
			continue // not a bucket (a stray file)
		}
		if !start.Before(now) {
			break // names sort by time: nothing later has expired
		}
		k, err := d.pruneBucket(ctx, filepath.Join(d.expiryRoot(), b.Name()), now, !start.Add(time.Minute).After(now))
		n += k
		if err != nil {
			return n, err
		}
	}
	if n > 0 {
		return n, d.sweepTrash()
	}
	return n, nil
}

// pruneReadChunk is how many names pruneBucket reads from a marker folder
// at a time: a minute can hold a hundred thousand markers, and reading,
// parsing and sorting them in one go is a long run of CPU (docs/benchmarks.md)
// that keeps the process's other goroutines waiting for a processor.
const pruneReadChunk = 1024

// pruneBucket settles the markers of one minute that are due at now, in
// batches; whole (the minute has passed) lets it remove the emptied folder.
// It reads the folder pruneReadChunk names at a time and settles each
// chunk's due markers before reading on (a name removed meanwhile is not
// returned twice, and one the reading misses is the next prune's).
func (d *Driver) pruneBucket(ctx context.Context, dir string, now time.Time, whole bool) (int, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, settled, batch := 0, 0, max(1, d.pruneBatch)
	var last time.Duration // how long the previous batch took; none yet
	for {
		names, rerr := f.Readdirnames(pruneReadChunk)
		var due []marker
		for _, name := range names {
			if m, ok := parseMarker(dir, name); ok && m.at.Before(now) {
				due = append(due, m)
			}
		}
		for len(due) > 0 {
			if last > 0 {
				if err := driver.Sleep(ctx, min(last, maxPrunePause)); err != nil {
					return n, err
				}
			}
			began := time.Now()
			k, removed, err := d.pruneMarkers(ctx, due[:min(batch, len(due))], now)
			n += len(removed)
			// The removed rows are unlinked now, the lock released: freeing a
			// file is what costs (several times moving it; docs/benchmarks.md),
			// and nothing reads or writes the trash but a prune.
			if rerr := removeAll(removed); err == nil {
				err = rerr
			}
			if err != nil {
				return n, err
			}
			due, settled = due[k:], settled+k
			last = max(time.Since(began), time.Nanosecond)
			if d.pruneHook != nil {
				d.pruneHook()
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return n, rerr
		}
	}
	if whole && (settled > 0 || untouchedSince(dir, time.Minute)) {
		// Without the lock: removing an emptied folder of thousands of
		// markers makes the file system read all its blocks (see
		// docs/benchmarks.md), and the removal is safe on its own. It
		// fails while anything remains in the folder (unparsable names
		// included), and the kernel checks that atomically with the
		// removal, so no marker is ever lost. The only writer it can
		// disturb is one putting a marker into this very folder between
		// making the folder and creating the marker: that create fails
		// with fs.ErrNotExist and writeMarker makes the folder again. So
		// that the writer's next try holds, a folder is removed only by a
		// pass that settled markers in it, or once nothing has touched it
		// for a minute (left empty by a crash): a folder the writer just
		// made, still empty, is neither.
		_ = os.Remove(dir)
		if d.pruneHook != nil {
			d.pruneHook()
		}
	}
	return n, nil
}

// untouchedSince reports whether nothing was added to or removed from dir
// in the last d (by its modification time).
func untouchedSince(dir string, d time.Duration) bool {
	fi, err := os.Stat(dir)
	return err == nil && time.Since(fi.ModTime()) > d
}

// pruneMarkers settles a prefix of ms under one hold of the exclusive
// lock, for at most PruneBatchTime: each row that did expire is moved to
// the trash folder (see trash), and each marker goes. It returns how many
// markers it settled and the trash names of the rows it removed, for the
// caller to unlink once the lock is released.
func (d *Driver) pruneMarkers(ctx context.Context, ms []marker, now time.Time) (int, []string, error) {
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return 0, nil, err
	}
	began := time.Now()
	defer func() {
		unlock()
		if d.pruneHold != nil {
			d.pruneHold(time.Since(began))
		}
	}()
	var removed []string
	expired := func(at time.Time) bool { return !at.IsZero() && at.Before(now) }
	for i, m := range ms {
		if i > 0 && time.Since(began) >= PruneBatchTime {
			return i, removed, nil
		}
		switch m.kind {
		case kindReceipt:
			name := filepath.Join(d.sidecar, "receipts", m.key+".json")
			var r driver.Receipt
			// A corrupt receipt is kept (reading it reports it).
			if ok, err := readJSON(name, &r); err == nil && ok && expired(r.ExpiresAt) {
				if removed, err = d.trash(removed, name, kindReceipt+"-"+m.key); err != nil {
					return i, removed, err
				}
			}
		case kindHistory:
			t, err := d.pruneHistory(m.name, m.key, now)
			removed = append(removed, t...)
			if err != nil {
				return i, removed, err
			}
		case kindTomb:
			b, err := os.ReadFile(m.name)
			if errors.Is(err, fs.ErrNotExist) {
				continue // settled by a concurrent prune
			}
			if err != nil {
				return i, removed, err
			}
			path := string(b)
			if reserved(path) != nil || !validMarkedPath(path) {
				break // not a path this driver wrote; drop the marker
			}
			var rec record
			if ok, err := readJSON(d.recordPath(path), &rec); err == nil && ok && rec.Tombstone && expired(rec.ExpiresAt) {
				if removed, err = d.trash(removed, d.recordPath(path), kindTomb+"-"+m.key); err != nil {
					return i, removed, err
				}
			}
		}
		if err := os.Remove(m.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return i, removed, err
		}
	}
	return len(ms), removed, nil
}

// trashDir is the sidecar folder a prune moves the rows it removes into
// before unlinking them without the lock. Its name starts with tmpPrefix,
// like every temporary file of the driver.
const trashDir = tmpPrefix + "pruned"

// trash moves the row file name into the trash folder as base (unique to
// the row: its kind and key) and returns removed with its new name
// appended (removed as it was if the row is gone already). It runs under the
// exclusive lock, where the move removes the row as unlinking it would
// (atomically, for readers in any process: the row's name is gone), but
// leaves freeing the file to removeAll, after the lock. Nothing but a
// prune names a file in the trash, so unlinking it later needs no lock; a
// row of the same kind and key trashed again before that replaces the
// first (both are garbage), and a file left by a crash is swept by the
// next prune that removes anything (sweepTrash).
func (d *Driver) trash(removed []string, name, base string) ([]string, error) {
	t := filepath.Join(d.sidecar, trashDir, base+".json")
	err := os.Rename(name, t)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(name); errors.Is(serr, fs.ErrNotExist) {
			return removed, nil // gone meanwhile (another process, without this lock): nothing to free
		}
		if err = os.MkdirAll(filepath.Dir(t), 0o755); err == nil {
			err = os.Rename(name, t)
		}
	}
	if err != nil {
		return removed, err
	}
	return append(removed, t), nil
}

// removeAll unlinks the trashed files names.
func removeAll(names []string) error {
	var errs []error
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sweepTrash unlinks what the trash folder holds: files a crashed prune
// left, or ones a concurrent prune is about to unlink itself (it ignores
// their absence).
func (d *Driver) sweepTrash() error {
	dir := filepath.Join(d.sidecar, trashDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = filepath.Join(dir, e.Name())
	}
	return removeAll(names)
}

// validMarkedPath refuses a marker's path that would leave the meta
// folder ("..", absolute, empty segments).
func validMarkedPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return false
		}
	}
	return true
}

// buildExpiryIndex writes the index of a directory that has none (written
// before the index existed, or with its index removed): one marker per receipt and tombstone record with
// an expiry, built aside and renamed into place under the exclusive lock,
// so it is complete or absent. It runs once per directory.
func (d *Driver) buildExpiryIndex(ctx context.Context) error {
	if _, err := os.Stat(d.expiryRoot()); err == nil {
		return nil
	}
	unlock, err := d.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(d.expiryRoot()); err == nil {
		return nil // built by another process meanwhile
	}
	tmp, err := os.MkdirTemp(d.sidecar, tmpPrefix+"expiry-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mark := func(at time.Time, kind, key string, data []byte) error {
		at = at.UTC()
		return writeMarker(filepath.Join(tmp, at.Format(bucketLayout), at.Format(markerLayout)+"-"+kind+"-"+key), data)
	}
	err = filepath.WalkDir(filepath.Join(d.sidecar, "receipts"), func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(name, ".json") {
			return err
		}
		var r driver.Receipt
		if ok, err := readJSON(name, &r); err != nil || !ok || r.ExpiresAt.IsZero() {
			return nil // a corrupt receipt is reported when it is read
		}
		return mark(r.ExpiresAt, kindReceipt, strings.TrimSuffix(filepath.Base(name), ".json"), nil)
	})
	if err != nil {
		return fmt.Errorf("filestore: building the expiry index: %w", err)
	}
	meta := filepath.Join(d.sidecar, "meta")
	err = filepath.WalkDir(meta, func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(name, ".json") {
			return err
		}
		var rec record
		if ok, err := readJSON(name, &rec); err != nil || !ok || !rec.Tombstone || rec.ExpiresAt.IsZero() {
			return nil
		}
		rel, err := filepath.Rel(meta, strings.TrimSuffix(name, ".json"))
		if err != nil {
			return err
		}
		path := filepath.ToSlash(rel)
		return mark(rec.ExpiresAt, kindTomb, receiptKey(path), []byte(path))
	})
	if err != nil {
		return fmt.Errorf("filestore: building the expiry index: %w", err)
	}
	return os.Rename(tmp, d.expiryRoot())
}
