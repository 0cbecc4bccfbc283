package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// readCounter counts the memory files (not the store's derived rows) read
// through it, one by one or by scope.
type readCounter struct {
	*nnDriver
	mu    sync.Mutex
	files int
}

func (c *readCounter) GetFile(ctx context.Context, p string) (*driver.File, error) {
	if _, reserved := rowpath.ReservedAt(p); !reserved {
		c.mu.Lock()
		c.files++
		c.mu.Unlock()
	}
	return c.nnDriver.GetFile(ctx, p)
}

func (c *readCounter) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	files, err := c.nnDriver.ReadScope(ctx, p)
	c.mu.Lock()
	c.files += len(files)
	c.mu.Unlock()
	return files, err
}

func (c *readCounter) read() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files
}

// persistedFolder fills u/main/ with n filler notes and one needle, has a
// store index it (its first search, with MaxFiles below n, builds it in
// the background) and write it, and returns the driver.
func persistedFolder(t *testing.T, n int) *nnDriver {
	t.Helper()
	ctx := t.Context()
	d := &nnDriver{rows: map[string]driver.File{}}
	s := newTestStore(d, nil)
	for i := range n {
		mustWrite(t, s, fmt.Sprintf("u/main/n%04d.md", i), fmt.Sprintf("note %d about the weekly groceries and the bus timetable", i))
	}
	mustWrite(t, s, "u/main/needle.md", "the spare key is under the blue flowerpot")
	if res := mustSearch(t, s, persistReq("spare key")); res.Fallback != FallbackBuilding {
		t.Fatalf("first search of %d files: fallback %q, want the build's", n+1, res.Fallback)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return d
}

func persistReq(q string) Request {
	return Request{Prefix: "u/main/", Query: q, Mode: BM25, Limit: 5, MaxFiles: 50, MaxChars: 2000, MaxFileChars: 2000}
}

func mustWrite(t *testing.T, s *testStore, p, content string) {
	t.Helper()
	var expected string
	if f, err := s.Read(t.Context(), p, 1); err == nil {
		expected = f.Version
	}
	if _, err := s.Write(t.Context(), WriteRequest{Path: p, Content: content, Expected: expected}); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

func mustSearch(t *testing.T, s *testStore, r Request) Result {
	t.Helper()
	res, err := s.Search(t.Context(), r)
	if err != nil {
		t.Fatalf("search %q: %v", r.Query, err)
	}
	return res
}

func matched(res Result) []string {
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.Path)
	}
	return out
}

// TestTermIndexPersists: a new store loads a folder's index from its rows
// (no fallback, no file read beyond its candidates), its rows are never
// files, and a folder's later changes, written by another store, reach it.
func TestTermIndexPersists(t *testing.T) {
	ctx := t.Context()
	d := persistedFolder(t, 300)
	if _, ok := d.rows[manifestPath("u/main/")]; !ok {
		t.Fatal("no manifest written")
	}
	c := &readCounter{nnDriver: d}
	b := newTestStore(c, nil)
	defer b.Close()
	res := mustSearch(t, b, persistReq("where is the spare key"))
	if res.Fallback != "" || !reflect.DeepEqual(matched(res), []string{"u/main/needle.md"}) || res.Scanned != 301 {
		t.Fatalf("a new store's first search: %+v", res)
	}
	if n := c.read(); n > persistReq("").Limit+extraCandidates {
		t.Fatalf("a new store's first search read %d files, want its candidates only", n)
	}
	// Never a file: not walked, not listed.
	for p, err := range b.Walk(ctx, "u/") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p, TermSegment) {
			t.Fatalf("Walk yielded %s", p)
		}
	}

	// Another store changes the folder; b sees it once it rechecks.
	a := newTestStore(d, nil)
	defer a.Close()
	mustSearch(t, a, persistReq("key"))
	mustWrite(t, a, "u/main/n0007.md", "the passport is in the drawer by the bed")
	mustWrite(t, a, "u/main/needle.md", "nothing to see here any more")
	if err := a.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	b.terms.recheck = 0
	mustSearch(t, b, persistReq("passport")) // starts the recheck
	if err := b.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if got := matched(mustSearch(t, b, persistReq("passport drawer"))); !reflect.DeepEqual(got, []string{"u/main/n0007.md"}) {
		t.Fatalf("after another store's change: %v", got)
	}
	if got := matched(mustSearch(t, b, persistReq("spare key flowerpot"))); len(got) != 0 {
		t.Fatalf("after another store's change, the old words still match: %v", got)
	}
}

// TestTermIndexShutdownWrites: changes not yet written when a store shuts
// down are written by Shutdown, so the next store has them, even a change
// of content no listing shows.
func TestTermIndexShutdownWrites(t *testing.T) {
	d := persistedFolder(t, 120)
	a := newTestStore(d, nil)
	mustSearch(t, a, persistReq("key"))
	mustWrite(t, a, "u/main/n0042.md", "the heron nests by the old mill")
	if err := a.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := newTestStore(d, nil)
	defer b.Close()
	res := mustSearch(t, b, persistReq("heron mill"))
	if res.Fallback != "" || !reflect.DeepEqual(matched(res), []string{"u/main/n0042.md"}) {
		t.Fatalf("after the shutdown: %+v", res)
	}
}

// TestTermIndexRepairsFromStore: files created and deleted behind the
// index (a process that died before writing its index, a hand edit) are
// found by the next store's listing; an unreadable manifest or a missing
// segment row makes the store build the index from the files and write
// it again.
func TestTermIndexRepairsFromStore(t *testing.T) {
	ctx := t.Context()
	d := persistedFolder(t, 120)
	d.rows["u/main/behind.md"] = driver.File{Path: "u/main/behind.md", Content: "an otter by the weir", Version: "v-behind"}
	delete(d.rows, "u/main/needle.md")
	b := newTestStore(d, nil)
	res := mustSearch(t, b, persistReq("otter weir"))
	if res.Fallback != "" || !reflect.DeepEqual(matched(res), []string{"u/main/behind.md"}) {
		t.Fatalf("a file created behind the index: %+v", res)
	}
	if got := matched(mustSearch(t, b, persistReq("spare key"))); len(got) != 0 {
		t.Fatalf("a file deleted behind the index matched: %v", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	for name, spoil := range map[string]func(){
		"garbage manifest": func() {
			f := d.rows[manifestPath("u/main/")]
			f.Content = "{not json"
			d.rows[f.Path] = f
		},
		"missing row": func() {
			for p := range d.rows {
				if isTermRow(p) && !strings.HasSuffix(p, "/manifest") {
					delete(d.rows, p)
				}
			}
		},
	} {
		spoil()
		s := newTestStore(d, nil)
		if res := mustSearch(t, s, persistReq("otter")); res.Fallback != FallbackBuilding {
			t.Fatalf("%s: fallback %q, want the build's", name, res.Fallback)
		}
		if err := s.WaitIndexed(ctx); err != nil {
			t.Fatal(err)
		}
		if got := matched(mustSearch(t, s, persistReq("otter"))); !reflect.DeepEqual(got, []string{"u/main/behind.md"}) {
			t.Fatalf("%s: once built: %v", name, got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		r := newTestStore(d, nil)
		if res := mustSearch(t, r, persistReq("otter")); res.Fallback != "" {
			t.Fatalf("%s: the index was not written again: %+v", name, res)
		}
		_ = r.Close()
	}
}

// TestTermIndexForgetErases: ForgetIndex (and Forget) erase the persisted
// index's rows, and no flush writes them again behind the erasure.
func TestTermIndexForgetErases(t *testing.T) {
	d := persistedFolder(t, 80)
	s := newTestStore(d, nil)
	defer s.Close()
	mustSearch(t, s, persistReq("key"))
	mustWrite(t, s, "u/main/late.md", "written just before the erasure") // a flush is scheduled
	if _, err := s.ForgetIndex(t.Context(), "u/"); err != nil {
		t.Fatal(err)
	}
	if err := s.terms.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	for p := range d.rows {
		if isTermRow(p) {
			t.Fatalf("row %s left after ForgetIndex", p)
		}
	}
}

// TestSegmentEncoding: a segment reads back as written, and every cut or
// altered encoding is refused, never a panic.
func TestSegmentEncoding(t *testing.T) {
	seg := &segment{
		terms:   []string{"heron", "weir", "ŝi", ""},
		docs:    []fwdDoc{{name: "a.md", sum: 1 << 60, bodyLen: 3, nameLen: 1, terms: []fwdTerm{{0, 2, 0}, {1, 1, 0}, {3, 0, 1}}}, {name: "b.md"}},
		deleted: []string{"c.md"},
	}
	b := seg.encode()
	got, err := decodeSegment(b)
	if err != nil || !reflect.DeepEqual(got.terms, seg.terms) || !reflect.DeepEqual(got.deleted, seg.deleted) || len(got.docs) != 2 ||
		!reflect.DeepEqual(got.docs[0], seg.docs[0]) || got.docs[1].name != "b.md" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for i := range b {
		if _, err := decodeSegment(b[:i]); !errors.Is(err, errSegment) {
			t.Fatalf("cut at %d: %v", i, err)
		}
		alt := []byte(string(b))
		alt[i] ^= 0xff
		_, _ = decodeSegment(alt) // no panic
	}
}

// gateEmbedder embeds each text as its length, once open is closed.
type gateEmbedder struct{ open chan struct{} }

func (gateEmbedder) Model() string { return "gate" }

func (e gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-e.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), 1}
	}
	return out, nil
}

// TestIndexQueueOverflow: a burst of writes larger than the indexer's
// queue loses no file: each one written has its index record once the
// indexer is done.
func TestIndexQueueOverflow(t *testing.T) {
	ctx := t.Context()
	e := gateEmbedder{make(chan struct{})}
	d := &nnDriver{rows: map[string]driver.File{}}
	s := newTestStore(d, &Options{Embedder: e})
	defer s.Close()
	n := maxIndexQueue + 300
	for i := range n {
		mustWrite(t, s, fmt.Sprintf("u/f%d/n%05d.md", i%2, i), fmt.Sprintf("note %d about the ferry", i))
	}
	s.ix.mu.Lock()
	queued, overflowed := len(s.ix.jobs), len(s.ix.overflow)
	s.ix.mu.Unlock()
	if queued > maxIndexQueue || overflowed != 2 {
		t.Fatalf("queued %d, overflowed folders %d: the burst did not overflow the queue", queued, overflowed)
	}
	close(e.open)
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := fmt.Sprintf("u/f%d/n%05d.md", i%2, i)
		if _, ok := d.rows[indexPath(p, 1)]; !ok {
			t.Fatalf("%s has no index record after the burst", p)
		}
	}
}

// stallDriver is nnDriver whose creates of index rows wait for their
// context's end; stalled is closed when the first one starts.
type stallDriver struct {
	*nnDriver
	once    *sync.Once
	stalled chan struct{}
}

func newStallDriver() stallDriver {
	return stallDriver{&nnDriver{rows: map[string]driver.File{}}, &sync.Once{}, make(chan struct{})}
}

func (d stallDriver) CreateFile(ctx context.Context, f driver.File) error {
	if isTermRow(f.Path) {
		d.once.Do(func() { close(d.stalled) })
		<-ctx.Done()
		return ctx.Err()
	}
	return d.nnDriver.CreateFile(ctx, f)
}

// TestCloseBoundsIndexWrites: Close returns, by its deadline, while the
// backend never answers the term index's writes: Close's own, and a
// background flush's already stalled when Close begins.
func TestCloseBoundsIndexWrites(t *testing.T) {
	for _, background := range []bool{false, true} {
		d := newStallDriver()
		s := newTestStore(d, nil)
		s.closeTimeout = 50 * time.Millisecond
		mustWrite(t, s, "u/main/a.md", "a heron by the weir")
		mustSearch(t, s, persistReq("heron"))
		mustWrite(t, s, "u/main/b.md", "an otter")
		if background {
			go func() { _ = s.WaitIndexed(context.Background()) }() // the flush starts at once
			<-d.stalled
		}
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("background %v: Close did not return while the backend stalled the index's writes", background)
		}
	}
}

// persistedTerms returns the terms of the docs in u/main/'s persisted
// segments, read as a store loads them.
func persistedTerms(t *testing.T, d *nnDriver) []string {
	t.Helper()
	s := newTestStore(d, nil)
	defer s.Close()
	ti := s.terms
	m, _, err := ti.readManifest(t.Context(), "u/main/")
	if err != nil || m == nil {
		return nil
	}
	segs, err := ti.readSegments(t.Context(), "u/main/", m.Segments)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, seg := range segs {
		for _, doc := range seg.docs {
			for _, ft := range doc.terms {
				terms = append(terms, seg.terms[ft.term])
			}
		}
	}
	return terms
}

// TestTermIndexForgetAcrossStores: a store that holds a folder's index
// never writes it back after another store forgot the folder (its words
// would outlive the erasure); it builds the folder again from its files.
func TestTermIndexForgetAcrossStores(t *testing.T) {
	ctx := t.Context()
	d := persistedFolder(t, 80)
	b := newTestStore(d, nil) // another process, which has loaded the folder
	defer b.Close()
	mustSearch(t, b, persistReq("spare key"))
	a := newTestStore(d, nil)
	if _, err := a.Forget(ctx, "u/main/", nil); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	if slices.Contains(persistedTerms(t, d), "flowerpot") {
		t.Fatal("not erased by Forget")
	}
	mustWrite(t, b, "u/main/new.md", "a brand new note")
	if err := b.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(persistedTerms(t, d), "flowerpot") {
		t.Fatal("the forgotten folder's words were written again by the other store")
	}
	if got := matched(mustSearch(t, b, persistReq("brand new note"))); !reflect.DeepEqual(got, []string{"u/main/new.md"}) {
		t.Fatalf("the other store after the erasure: %v", got)
	}
	if got := matched(mustSearch(t, b, persistReq("spare key"))); len(got) != 0 {
		t.Fatalf("the other store still finds a forgotten file: %v", got)
	}
}

// TestTermIndexBadManifest: a manifest naming impossible rows is refused
// (the index built from the files), never a panic.
func TestTermIndexBadManifest(t *testing.T) {
	for _, rows := range []int{-1, 0, maxSegRows + 1} {
		d := persistedFolder(t, 80)
		mp := manifestPath("u/main/")
		row := d.rows[mp]
		var m termManifest
		if err := json.Unmarshal([]byte(row.Content), &m); err != nil {
			t.Fatal(err)
		}
		m.Segments[0].Rows = rows
		b, _ := json.Marshal(m)
		row.Content = string(b)
		d.rows[mp] = row
		s := newTestStore(d, nil)
		if res := mustSearch(t, s, persistReq("spare key")); res.Fallback != FallbackBuilding {
			t.Fatalf("rows %d: fallback %q, want the build's", rows, res.Fallback)
		}
		_ = s.Close()
	}
}

// syncHook is nnDriver that, once armed, holds the first read of a
// segment row until release is closed (blocked is closed when it starts).
type syncHook struct {
	*nnDriver
	mu               sync.Mutex
	armed            bool
	blocked, release chan struct{}
}

func (h *syncHook) GetFile(ctx context.Context, p string) (*driver.File, error) {
	if isTermRow(p) && !strings.HasSuffix(p, "/manifest") {
		h.mu.Lock()
		armed := h.armed
		h.armed = false
		h.mu.Unlock()
		if armed {
			close(h.blocked)
			<-h.release
		}
	}
	return h.nnDriver.GetFile(ctx, p)
}

// TestTermIndexSyncKeepsNewerChange: a change the feed applies while a
// flush reads another store's segments is not undone by the flush.
func TestTermIndexSyncKeepsNewerChange(t *testing.T) {
	ctx := t.Context()
	d := persistedFolder(t, 80)
	h := &syncHook{nnDriver: d, blocked: make(chan struct{}), release: make(chan struct{})}
	a := newTestStore(h, nil)
	defer a.Close()
	b := newTestStore(d, nil)
	defer b.Close()
	mustSearch(t, a, persistReq("spare key"))
	mustSearch(t, b, persistReq("spare key"))
	mustWrite(t, b, "u/main/b.md", "written by the other store")
	if err := b.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
	mustWrite(t, a, "u/main/q.md", "alpha version one")
	<-h.blocked // a's flush reads b's segment
	mustWrite(t, a, "u/main/q.md", "omega zebra version two")
	fi := a.terms.folders["u/main/"]
	for !fi.indexedAs("u/main/q.md", "omega zebra version two") {
		time.Sleep(5 * time.Millisecond) // the feed applies v2
	}
	close(h.release)
	if err := a.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if got := matched(mustSearch(t, a, persistReq("zebra"))); !reflect.DeepEqual(got, []string{"u/main/q.md"}) {
		t.Fatalf("a word of q's current content: %v", got)
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c := newTestStore(d, nil)
	defer c.Close()
	if got := matched(mustSearch(t, c, persistReq("zebra"))); !reflect.DeepEqual(got, []string{"u/main/q.md"}) {
		t.Fatalf("a new store: %v", got)
	}
}

// TestTermIndexSegmentsMerge: a large folder's changes are written as
// segments of changes, merged past maxDeltas, never the whole index per
// flush; the whole index is written again once a quarter of it changed;
// and a new store loads every change.
func TestTermIndexSegmentsMerge(t *testing.T) {
	ctx := t.Context()
	const n = 4000 // over wholeBelow's size
	d := persistedFolder(t, n)
	manifest := func() termManifest {
		t.Helper()
		var m termManifest
		if err := json.Unmarshal([]byte(d.rows[manifestPath("u/main/")].Content), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := manifest().Segments[0].ID
	s := newTestStore(d, nil)
	defer s.Close()
	mustSearch(t, s, persistReq("key"))
	other := newTestStore(d, nil) // another process, holding the base, follows the merges
	defer other.Close()
	mustSearch(t, other, persistReq("key"))
	other.terms.recheck = 0
	for i := range 2 * maxDeltas {
		mustWrite(t, s, fmt.Sprintf("u/main/n%04d.md", i), fmt.Sprintf("round %d: the lighthouse keeper's log", i))
		if err := s.WaitIndexed(ctx); err != nil {
			t.Fatal(err)
		}
		m := manifest()
		if m.Segments[0].ID != base || len(m.Segments) > maxDeltas+1 {
			t.Fatalf("after change %d: segments %+v, want the base %s and at most %d more", i, m.Segments, base, maxDeltas)
		}
		if i%5 == 4 || i == 2*maxDeltas-1 {
			mustSearch(t, other, persistReq("keeper")) // starts its recheck
			if err := other.WaitIndexed(ctx); err != nil {
				t.Fatal(err)
			}
			q := Request{Prefix: "u/main/", Query: "lighthouse keeper's log", Mode: BM25, Limit: 100, MaxFiles: 100, MaxChars: 1 << 20, MaxFileChars: 2000}
			if got := len(mustSearch(t, other, q).Matches); got != i+1 {
				t.Fatalf("after change %d the other store finds %d of the keeper's notes, want %d", i, got, i+1)
			}
		}
	}
	const quarter = n/4 + 50 // distinct files, more than a quarter however the flushes split them
	for i := range quarter {
		mustWrite(t, s, fmt.Sprintf("u/main/n%04d.md", i), fmt.Sprintf("round two %d: the lighthouse keeper's log", i))
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if m := manifest(); m.Segments[0].ID == base || m.Segments[0].Docs != n+1 {
		t.Fatalf("after a quarter changed: segments %+v, want a new base of every file", m.Segments)
	}
	mustWrite(t, s, "u/main/n3500.md", "the keeper's cat sleeps on the lamp")
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	r := newTestStore(d, nil)
	defer r.Close()
	if got := matched(mustSearch(t, r, persistReq("cat lamp"))); !reflect.DeepEqual(got, []string{"u/main/n3500.md"}) {
		t.Fatalf("a new store: %v", got)
	}
	res := mustSearch(t, r, Request{Prefix: "u/main/", Query: "lighthouse keeper", Mode: BM25, Limit: 2000, MaxFiles: 2000, MaxChars: 1 << 22, MaxFileChars: 2000})
	if res.Fallback != "" || len(res.Matches) != quarter+1 {
		t.Fatalf("a new store finds %d files of the keeper (fallback %q), want %d", len(res.Matches), res.Fallback, quarter+1)
	}
}
