package search

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
	"github.com/agentmem/agentmem/core/internal/ulid"
)

// testStore is the little of a store the engine's own tests need: files
// written over the driver's primitives with their versions checked, the
// change feed after each, and the engine's Host (reads that skip derived
// rows and tombstones). The store's tests and the contract suite run the
// engine under the real store (core/store).
type testStore struct {
	*Engine
	d            driver.Driver
	closeTimeout time.Duration
}

// WriteRequest and DeleteRequest are what testStore's Write and Delete
// take: a path, and the version the caller read ("" to create).
type (
	WriteRequest  struct{ Path, Content, Expected string }
	DeleteRequest struct{ Path, Expected string }
)

var errTestNotFound = errors.New("test store: not found")

// newTestStore returns a testStore over d with its engine (opts as New's).
func newTestStore(d driver.Driver, opts *Options) *testStore {
	s := &testStore{d: d, closeTimeout: 5 * time.Second}
	s.Engine = New(s, d, opts)
	return s
}

// Write creates p (Expected "") or replaces the version Expected names,
// then publishes the change.
func (s *testStore) Write(ctx context.Context, r WriteRequest) (string, error) {
	f := driver.File{Path: r.Path, Content: r.Content, Version: ulid.New(time.Now())}
	var err error
	if r.Expected == "" {
		err = s.d.CreateFile(ctx, f)
	} else {
		err = s.d.ReplaceFile(ctx, f, r.Expected)
	}
	if err != nil {
		return "", err
	}
	s.Changed(ctx, r.Path, true)
	return f.Version, nil
}

// Delete deletes the version Expected names of p, then publishes it.
func (s *testStore) Delete(ctx context.Context, r DeleteRequest) (struct{}, error) {
	if err := s.d.DeleteFile(ctx, r.Path, r.Expected); err != nil {
		return struct{}{}, err
	}
	s.Changed(ctx, r.Path, true)
	return struct{}{}, nil
}

// Read returns the file at p (errTestNotFound when there is none); n is
// ignored.
func (s *testStore) Read(ctx context.Context, p string, _ int) (*driver.File, error) {
	f, err := s.d.GetFile(ctx, p)
	if err != nil {
		return nil, err
	}
	if f == nil || f.Tombstone {
		return nil, errTestNotFound
	}
	return f, nil
}

// Forget deletes every file under prefix, then the index rows.
func (s *testStore) Forget(ctx context.Context, prefix string, _ any) (int, error) {
	var paths []string
	for p, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return 0, err
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		f, err := s.Read(ctx, p, 0)
		if err != nil {
			return 0, err
		}
		if _, err := s.Delete(ctx, DeleteRequest{Path: p, Expected: f.Version}); err != nil {
			return 0, err
		}
	}
	return s.ForgetIndex(ctx, prefix)
}

// Reindex is the store's: the term index erased, then the files embedded.
func (s *testStore) Reindex(ctx context.Context, prefix string) (ReindexStats, error) {
	if err := s.ForgetTerms(ctx, prefix); err != nil {
		return ReindexStats{}, err
	}
	return s.Engine.Reindex(ctx, prefix)
}

// Shutdown stops the engine within ctx, then closes the driver.
func (s *testStore) Shutdown(ctx context.Context) error { return s.stop(ctx) }

// Close stops the engine within closeTimeout, then closes the driver.
func (s *testStore) Close() error { return s.stop(nil) }

func (s *testStore) stop(ctx context.Context) error {
	err := s.Engine.Close(ctx, time.Now().Add(s.closeTimeout))
	if s.d != nil {
		err = errors.Join(err, s.d.Close())
	}
	return err
}

// Usable is Host's.
func (s *testStore) Usable(ctx context.Context) error {
	if s.d == nil {
		return errors.New("test store: no driver")
	}
	return ctx.Err()
}

// GetFiles is Host's: one GetFile per path.
func (s *testStore) GetFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	out := make(map[string]*driver.File, len(paths))
	for _, p := range paths {
		f, err := s.d.GetFile(ctx, p) // nil, nil when there is none
		if err != nil {
			return nil, err
		}
		if f != nil {
			out[p] = f
		}
	}
	return out, nil
}

// List is Host's.
func (s *testStore) List(ctx context.Context, prefix string, limit int, direct bool) ([]string, error) {
	var out []string
	for p, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		if len(out) == limit {
			break
		}
		if !direct || rowpath.DirectlyUnder(p, prefix) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Walk is Host's: every file under prefix, in order, without derived rows
// or tombstones.
func (s *testStore) Walk(ctx context.Context, prefix string) iter.Seq2[string, error] {
	const pageSize = 100
	return func(yield func(string, error) bool) {
		after := ""
		for {
			entries, err := s.d.ListFiles(ctx, driver.ListParams{Prefix: prefix, After: after, Limit: pageSize})
			if err != nil {
				yield("", err)
				return
			}
			for _, e := range entries {
				if _, reserved := rowpath.ReservedAt(e.Path); reserved || e.Tombstone {
					continue
				}
				if !yield(e.Path, nil) {
					return
				}
			}
			if len(entries) < pageSize {
				return
			}
			after = entries[len(entries)-1].Path
		}
	}
}

// Warn is Host's: nothing.
func (s *testStore) Warn(context.Context, string, string, error) {}

// Observe is Host's: nothing.
func (s *testStore) Observe(ctx context.Context, _ string) (context.Context, func(error, int)) {
	return ctx, func(error, int) {}
}
