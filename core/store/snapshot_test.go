package store_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// primitivesOnly hides every optional interface of a driver.
type primitivesOnly struct{ driver.Driver }

// TestReadAndList checks the one-round-trip read on both paths: with
// driver.SnapshotReader (memstore) and with the two reads issued
// concurrently. Tombstones in the first page are skipped and the listing
// pages on; an absent or tombstoned file is nil; bounds are checked.
func TestReadAndList(t *testing.T) {
	for name, snap := range map[string]bool{"snapshot": true, "fallback": false} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			m := newMemDriver(t)
			var d driver.Driver = m
			if !snap {
				d = primitivesOnly{m}
			}
			s := store.New(d, nil)
			if s.Capabilities().Snapshot != snap {
				t.Fatalf("capabilities %+v", s.Capabilities())
			}
			for _, p := range []string{"s/a.md", "s/b.md", "s/MEMORY.md"} {
				if err := m.CreateFile(ctx, driver.File{Path: p, Version: "t-" + p, Tombstone: true}); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{"s/c.md", "s/d.md", "s/e.md"} {
				if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "content of " + p}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := s.ReadAndList(ctx, store.ReadAndListRequest{Path: "s/MEMORY.md", MaxChars: 5, Prefix: "s/", Limit: 2})
			if err != nil || r.File != nil || !slices.Equal(r.Paths, []string{"s/c.md", "s/d.md"}) {
				t.Fatalf("ReadAndList over tombstones = %+v, %v", r, err)
			}
			r, err = s.ReadAndList(ctx, store.ReadAndListRequest{Path: "s/c.md", MaxChars: 7, Prefix: "s/", Limit: 10})
			if err != nil || r.File == nil || r.File.Content != "content" || !r.File.Truncated || r.File.Path != "s/c.md" ||
				!slices.Equal(r.Paths, []string{"s/c.md", "s/d.md", "s/e.md"}) {
				t.Fatalf("ReadAndList = %+v (file %+v), %v", r, r.File, err)
			}
			for _, bad := range []struct {
				req  store.ReadAndListRequest
				want error
			}{
				{store.ReadAndListRequest{Path: "s/c.md", MaxChars: 0, Prefix: "s/", Limit: 1}, store.ErrInvalidBound},
				{store.ReadAndListRequest{Path: "s/c.md", MaxChars: 1, Prefix: "s/", Limit: 0}, store.ErrInvalidBound},
				{store.ReadAndListRequest{Path: "s/../c.md", MaxChars: 1, Prefix: "s/", Limit: 1}, store.ErrInvalidPath},
				{store.ReadAndListRequest{Path: "s/c.md", MaxChars: 1, Prefix: "/s", Limit: 1}, store.ErrInvalidPath},
			} {
				if _, err := s.ReadAndList(ctx, bad.req); !errors.Is(err, bad.want) {
					t.Errorf("ReadAndList(%+v) = %v, want %v", bad.req, err, bad.want)
				}
			}
		})
	}
	if _, err := store.New(nil, nil).ReadAndList(t.Context(), store.ReadAndListRequest{Path: "a.md", MaxChars: 1, Limit: 1}); !errors.Is(err, store.ErrNoDriver) {
		t.Fatalf("nil driver: %v", err)
	}
}
