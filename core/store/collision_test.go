package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// recorder notes the reads and listings a store makes: the paths it reads
// (GetFile, and GetFiles when batched) and the prefixes it lists.
type recorder struct {
	driver.Driver
	mu        sync.Mutex
	reads     []string
	batches   int
	lists     []string
	afterList func() // runs after each listing, when set
}

func (r *recorder) GetFile(ctx context.Context, path string) (*driver.File, error) {
	r.mu.Lock()
	r.reads = append(r.reads, path)
	r.mu.Unlock()
	return r.Driver.GetFile(ctx, path)
}

func (r *recorder) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	r.mu.Lock()
	r.lists = append(r.lists, p.Prefix)
	r.mu.Unlock()
	e, err := r.Driver.ListFiles(ctx, p)
	if r.afterList != nil {
		r.afterList()
	}
	return e, err
}

// take returns and clears what was noted.
func (r *recorder) take() (reads []string, batches int, lists []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reads, batches, lists = r.reads, r.batches, r.lists
	r.reads, r.batches, r.lists = nil, 0, nil
	return reads, batches, lists
}

// atomic is a recorder that also offers the inner memstore's atomic
// mutation and batched read.
type atomic struct{ *recorder }

func (a atomic) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	return a.Driver.(driver.Mutator).Mutate(ctx, p)
}

func (a atomic) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	a.mu.Lock()
	a.reads = append(a.reads, paths...)
	a.batches++
	a.mu.Unlock()
	return a.Driver.(driver.BatchGetter).GetFiles(ctx, paths)
}

// modes returns a fresh store in each mode with its recorder and the
// memstore underneath.
func modes() map[string]func() (*store.Store, *recorder, *memstore.Driver) {
	return map[string]func() (*store.Store, *recorder, *memstore.Driver){
		"atomic": func() (*store.Store, *recorder, *memstore.Driver) {
			m := mustMemDriver()
			r := &recorder{Driver: m}
			return store.New(atomic{r}, nil), r, m
		},
		"primitives": func() (*store.Store, *recorder, *memstore.Driver) {
			m := mustMemDriver()
			r := &recorder{Driver: plain{m}}
			return store.New(r, nil), r, m
		},
	}
}

// TestPathCollision checks that a create refused because a file and a
// folder would share a name says which file is in the way, matches
// ErrPathCollision, writes nothing, and leaves no receipt that blocks a
// retry of its operation.
func TestPathCollision(t *testing.T) {
	for name, open := range modes() {
		s, _, _ := open()
		ctx := t.Context()
		m, err := s.Write(ctx, store.WriteRequest{Path: "p/x.md", Content: "a file"})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []*store.Operation{nil, {ID: "op", Fingerprint: "fp"}} {
			for path, want := range map[string]string{
				"p/x.md/y.md":      `agentmem: cannot create "p/x.md/y.md": "p/x.md" is a file (a file and a folder cannot share a path)`,
				"p/x.md/deep/y.md": `agentmem: cannot create "p/x.md/deep/y.md": "p/x.md" is a file (a file and a folder cannot share a path)`,
				"p":                `agentmem: cannot create "p": "p" is a folder holding "p/x.md" (a file and a folder cannot share a path)`,
			} {
				_, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "x", Operation: o})
				if err == nil || err.Error() != want || !errors.Is(err, store.ErrPathCollision) {
					t.Errorf("%s, operation %v: create %s = %v, want %q matching ErrPathCollision", name, o != nil, path, err, want)
				}
				if _, err := s.Read(ctx, path, 10); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s: read %s after a refused create = %v, want ErrNotFound", name, path, err)
				}
			}
		}
		// An update of the blocking file never collides.
		if m, err = s.Write(ctx, store.WriteRequest{Path: "p/x.md", Content: "still a file", Expected: m.Version}); err != nil {
			t.Fatalf("%s: update: %v", name, err)
		}
		if _, err := s.Delete(ctx, store.DeleteRequest{Path: "p/x.md", Expected: m.Version}); err != nil {
			t.Fatalf("%s: delete: %v", name, err)
		}
		got, err := s.Write(ctx, store.WriteRequest{Path: "p", Content: "x", Operation: &store.Operation{ID: "op", Fingerprint: "fp"}})
		if err != nil || got.Replayed {
			t.Errorf("%s: retry of the refused operation = %+v, %v; want applied", name, got, err)
		}
	}
}

// TestPathCollisionRequests pins what the check costs: a create reads its
// ancestors once (one batched read, or one read each) and lists below
// itself once; a top-level create reads no ancestor; updates, deletes and
// (on the primitive path) a replay of a create read and list nothing for
// it.
func TestPathCollisionRequests(t *testing.T) {
	for name, open := range modes() {
		s, r, _ := open()
		ctx := t.Context()
		if _, err := s.Write(ctx, store.WriteRequest{Path: "a/b/c.md", Content: "x", Operation: &store.Operation{ID: "c", Fingerprint: "fp"}}); err != nil {
			t.Fatal(err)
		}
		reads, batches, lists := r.take()
		wantBatches := 0
		if name == "atomic" {
			wantBatches = 1
		}
		var ancestors []string
		for _, p := range reads {
			if p != "a/b/c.md" { // the primitive path also reads the target itself
				ancestors = append(ancestors, p)
			}
		}
		if !slices.Equal(ancestors, []string{"a", "a/b"}) || batches != wantBatches || !slices.Equal(lists, []string{"a/b/c.md/"}) {
			t.Errorf("%s: create read %q in %d batches and listed %q; want a, a/b in %d batches and a/b/c.md/", name, reads, batches, lists, wantBatches)
		}
		if _, err := s.Write(ctx, store.WriteRequest{Path: "top.md", Content: "x"}); err != nil {
			t.Fatal(err)
		}
		if reads, batches, lists := r.take(); len(reads) != 0 || batches != 0 || !slices.Equal(lists, []string{"top.md/"}) {
			t.Errorf("%s: top-level create read %q in %d batches and listed %q; want one listing only", name, reads, batches, lists)
		}
		m, err := s.Write(ctx, store.WriteRequest{Path: "a/b/c.md", Content: "y", Operation: &store.Operation{ID: "c", Fingerprint: "fp"}})
		if err != nil || !m.Replayed {
			t.Fatalf("%s: replay = %+v, %v", name, m, err)
		}
		if _, _, lists := r.take(); name == "primitives" && len(lists) != 0 {
			t.Errorf("%s: a replay listed %q; want the receipt's answer without the check", name, lists)
		}
		f, err := s.Read(ctx, "a/b/c.md", 10)
		if err != nil {
			t.Fatal(err)
		}
		r.take()
		m, err = s.Write(ctx, store.WriteRequest{Path: "a/b/c.md", Content: "z", Expected: f.Version, Operation: &store.Operation{ID: "u", Fingerprint: "fp"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Delete(ctx, store.DeleteRequest{Path: "a/b/c.md", Expected: m.Version, Operation: &store.Operation{ID: "d", Fingerprint: "fp"}}); err != nil {
			t.Fatal(err)
		}
		if reads, batches, lists := r.take(); batches != 0 || len(lists) != 0 || slices.ContainsFunc(reads, func(p string) bool { return p != "a/b/c.md" }) {
			t.Errorf("%s: update and delete read %q in %d batches and listed %q; want no check", name, reads, batches, lists)
		}
	}
}

// TestPathCollisionRace makes the blocking file appear between the store's
// check and the create: memstore refuses the create in the same atomic
// step (Mutate on the atomic path, the create over a tombstone on the
// primitive path), so the race leaves no file and folder of one name.
func TestPathCollisionRace(t *testing.T) {
	for name, open := range modes() {
		s, r, m := open()
		ctx := t.Context()
		r.afterList = func() {
			r.afterList = nil
			if err := m.CreateFile(ctx, driver.File{Path: "p/x.md", Content: "raced", Version: "v-raced"}); err != nil {
				t.Error(err)
			}
		}
		for _, o := range []*store.Operation{{ID: "op", Fingerprint: "fp"}, nil} {
			_, err := s.Write(ctx, store.WriteRequest{Path: "p/x.md/y.md", Content: "x", Operation: o})
			if !errors.Is(err, store.ErrPathCollision) {
				t.Errorf("%s, operation %v: create under a file created meanwhile = %v, want ErrPathCollision", name, o != nil, err)
			}
		}
		if paths, err := s.ListPaths(ctx, "", 10); err != nil || !slices.Equal(paths, []string{"p/x.md"}) {
			t.Errorf("%s: listed %q, %v; want only the raced file", name, paths, err)
		}
	}
}
