package memstore

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"

	"github.com/agentmem/agentmem/core/driver"
)

// Driver keeps files and receipts in memory. The zero value is not usable;
// call New.
type Driver struct {
	mu       sync.Mutex
	files    map[string]driver.File
	paths    *index // the keys of files, ordered
	receipts map[string]driver.Receipt
	history  map[string]driver.HistoryEntry // by key
	hkeys    *index                         // the keys of history, ordered
	expiry   expiry                         // when receipts, tombstones and history entries may be pruned
	closed   bool

	pruneBatch int    // rows removed per hold of mu (default DefaultPruneBatch)
	pruneHook  func() // tests: called between prune batches, mu released
}

// DefaultPruneBatch is how many expired rows [Driver.PruneExpired] removes
// per hold of the driver's mutex; other calls run between batches.
const DefaultPruneBatch = 256

var (
	_ driver.Driver           = (*Driver)(nil)
	_ driver.Mutator          = (*Driver)(nil)
	_ driver.CollisionChecker = (*Driver)(nil)
	_ driver.Appender         = (*Driver)(nil)
	_ driver.BatchGetter      = (*Driver)(nil)
	_ driver.ScopeReader      = (*Driver)(nil)
	_ driver.SnapshotReader   = (*Driver)(nil)
	_ driver.Pruner           = (*Driver)(nil)
	_ driver.Historian        = (*Driver)(nil)
	_ driver.Namer            = (*Driver)(nil)
)

// Name implements driver.Namer: "memstore", the backend's name in telemetry
// and logs.
func (d *Driver) Name() string { return "memstore" }

// Options configures a Driver. It has no fields yet; nil means defaults.
type Options struct{}

// New returns an empty in-memory driver for [store.New]. opts may be nil.
// A nil ctx fails with an error wrapping [driver.ErrNilArgument], a done
// one with its error; nothing else fails.
func New(ctx context.Context, opts *Options) (*Driver, error) {
	if ctx == nil {
		return nil, fmt.Errorf("memstore: pass a context to New, not nil: %w", driver.ErrNilArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Driver{files: map[string]driver.File{}, paths: newIndex(), receipts: map[string]driver.Receipt{}, history: map[string]driver.HistoryEntry{}, hkeys: newIndex(), pruneBatch: DefaultPruneBatch}, nil
}

var errClosed = fmt.Errorf("memstore: driver is closed")

func copyFile(f driver.File) *driver.File {
	f.Metadata = maps.Clone(f.Metadata)
	return &f
}

func (d *Driver) lock() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return errClosed
	}
	return nil
}

func (d *Driver) put(f driver.File) {
	if _, ok := d.files[f.Path]; !ok {
		d.paths.insert(f.Path)
	}
	d.files[f.Path] = *copyFile(f)
	if f.Tombstone {
		d.expiry.add(f.ExpiresAt, tombstoneRow, f.Path)
	}
}

func (d *Driver) remove(path string) {
	delete(d.files, path)
	d.paths.remove(path)
}

// putReceipt stores r and schedules its expiry when that changed.
func (d *Driver) putReceipt(r driver.Receipt) {
	if cur, ok := d.receipts[r.ID]; !ok || !cur.ExpiresAt.Equal(r.ExpiresAt) {
		d.expiry.add(r.ExpiresAt, receiptRow, r.ID)
	}
	d.receipts[r.ID] = r
}

func receiptID(r *driver.Receipt) string {
	if r == nil {
		return ""
	}
	return r.ID
}

// Close implements driver.Driver. Later calls fail.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

// index is the ordered set of paths: a skip list, so that an insert, a
// removal and a seek cost O(log n) expected and a range walk costs what it
// returns. The driver's mutex guards it.
type index struct {
	head  node // sentinel; head.next[i] is the first node of level i
	level int  // levels in use (≥ 1)
	len   int
}

type node struct {
	key  string
	next []*node
}

// maxLevel bounds the tower height: with p = 1/4 it serves 4^maxLevel
// keys at full speed.
const maxLevel = 20

func newIndex() *index {
	return &index{head: node{next: make([]*node, maxLevel)}, level: 1}
}

// randomLevel draws a tower height: level k with probability (1/4)^(k-1).
func randomLevel() int {
	l := 1
	for l < maxLevel && rand.Uint32()&3 == 0 {
		l++
	}
	return l
}

// path fills prev with, for each level, the last node before key.
func (x *index) path(key string, prev *[maxLevel]*node) {
	n := &x.head
	for i := x.level - 1; i >= 0; i-- {
		for n.next[i] != nil && n.next[i].key < key {
			n = n.next[i]
		}
		prev[i] = n
	}
}

// insert adds key; it reports false when key is already present.
func (x *index) insert(key string) bool {
	var prev [maxLevel]*node
	x.path(key, &prev)
	if n := prev[0].next[0]; n != nil && n.key == key {
		return false
	}
	l := randomLevel()
	for ; x.level < l; x.level++ {
		prev[x.level] = &x.head
	}
	n := &node{key: key, next: make([]*node, l)}
	for i := range l {
		n.next[i], prev[i].next[i] = prev[i].next[i], n
	}
	x.len++
	return true
}

// remove deletes key; it reports false when key is absent.
func (x *index) remove(key string) bool {
	var prev [maxLevel]*node
	x.path(key, &prev)
	n := prev[0].next[0]
	if n == nil || n.key != key {
		return false
	}
	for i := range len(n.next) {
		prev[i].next[i] = n.next[i]
	}
	for x.level > 1 && x.head.next[x.level-1] == nil {
		x.level--
	}
	x.len--
	return true
}

// seek returns the first node whose key is ≥ key, or nil.
func (x *index) seek(key string) *node {
	var prev [maxLevel]*node
	x.path(key, &prev)
	return prev[0].next[0]
}

// keys returns every key in order (tests).
func (x *index) keys() []string {
	out := make([]string, 0, x.len)
	for n := x.head.next[0]; n != nil; n = n.next[0] {
		out = append(out, n.key)
	}
	return out
}
