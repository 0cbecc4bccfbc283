package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	_ "github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

func openForget(t *testing.T, opts *store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), "mem://", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustWrite(t *testing.T, s *store.Store, path, content, expected string) store.Mutation {
	t.Helper()
	m, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: content, Expected: expected})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return m
}

// Forget erases a namespace's files, history and index rows and nothing
// outside it; a file changed after the listing is kept (ErrConflict) and
// the rerun erases it.
func TestForget(t *testing.T) {
	ctx := t.Context()
	s := openForget(t, &store.Options{History: &store.HistoryOptions{}})
	mustWrite(t, s, "kamal/main/MEMORY.md", "- a\n", "")
	notes := mustWrite(t, s, "kamal/main/notes.md", "- b\n", "")
	mustWrite(t, s, "kamal-b/main/MEMORY.md", "- c\n", "")
	mustWrite(t, s, "kamal.md", "- d\n", "")
	// An index row left by a file deleted behind the store's back.
	if err := s.Driver().CreateFile(ctx, driver.File{Path: "kamal/main/" + search.IndexSegment + "/gone.md", Content: "{}", Version: "v1"}); err != nil {
		t.Fatal(err)
	}

	var found store.ForgetFound
	st, err := s.Forget(ctx, "kamal/", &store.ForgetOptions{Confirm: func(ctx context.Context, f store.ForgetFound) error {
		found = f
		// Written after the listing: kept.
		mustWrite(t, s, "kamal/main/notes.md", "- b2\n", notes.Version)
		return nil
	}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("forget with a file changed after the listing: %v, want ErrConflict", err)
	}
	if found != (store.ForgetFound{Prefix: "kamal/", Files: 2, History: true}) {
		t.Fatalf("Confirm was told %+v", found)
	}
	if st.Deleted != 1 || st.Kept != 1 || st.HistoryEntries < 4 || st.IndexRows != 1 {
		t.Fatalf("stats %+v, want 1 deleted, 1 kept, at least 4 history entries, 1 index row", st)
	}
	if page, err := s.History(ctx, store.HistoryRequest{Prefix: "kamal/", Limit: 10}); err != nil || len(page.Entries) != 0 {
		t.Fatalf("history after forget: %v %v", page.Entries, err)
	}
	if rows, err := s.Driver().ListFiles(ctx, driver.ListParams{Prefix: "kamal/main/" + search.IndexSegment, Limit: 10}); err != nil || len(rows) != 0 {
		t.Fatalf("index rows after forget: %v %v", rows, err)
	}

	st, err = s.Forget(ctx, "kamal/", nil)
	if err != nil || st.Deleted != 1 || st.Kept != 0 {
		t.Fatalf("rerun: %+v %v, want the kept file deleted", st, err)
	}
	paths, err := s.ListPaths(ctx, "", 10)
	if err != nil || fmt.Sprint(paths) != "[kamal-b/main/MEMORY.md kamal.md]" {
		t.Fatalf("left %v %v, want only the files outside kamal/", paths, err)
	}
	if page, err := s.History(ctx, store.HistoryRequest{Prefix: "kamal-b/", Limit: 10}); err != nil || len(page.Entries) != 1 {
		t.Fatalf("kamal-b's history: %v %v, want its one entry kept", page.Entries, err)
	}
}

// A Confirm that refuses erases nothing; an empty or bad prefix is refused
// before anything is read.
func TestForgetRefused(t *testing.T) {
	ctx := t.Context()
	s := openForget(t, nil)
	mustWrite(t, s, "kamal/main/MEMORY.md", "- a\n", "")
	no := errors.New("not confirmed")
	var found store.ForgetFound
	st, err := s.Forget(ctx, "kamal/", &store.ForgetOptions{Confirm: func(_ context.Context, f store.ForgetFound) error { found = f; return no }})
	if err != no || st != (store.ForgetStats{}) {
		t.Fatalf("refused: %+v %v, want nothing erased and Confirm's error", st, err)
	}
	if found != (store.ForgetFound{Prefix: "kamal/", Files: 1}) {
		t.Fatalf("Confirm was told %+v (no history is recorded)", found)
	}
	if _, err := s.Read(ctx, "kamal/main/MEMORY.md", 10); err != nil {
		t.Fatalf("the file went: %v", err)
	}
	for _, p := range []string{"", "../x/"} {
		if _, err := s.Forget(ctx, p, nil); !errors.Is(err, store.ErrInvalidPath) {
			t.Errorf("Forget(%q): %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := s.Read(ctx, "kamal/main/MEMORY.md", 10); err != nil {
		t.Fatalf("the file went: %v", err)
	}
}

// deadlines records whether every read and delete of a file came with a
// deadline.
type deadlines struct {
	driver.Driver
	mu      sync.Mutex
	calls   int
	without int
}

func (d *deadlines) note(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if _, ok := ctx.Deadline(); !ok {
		d.without++
	}
}

func (d *deadlines) GetFile(ctx context.Context, p string) (*driver.File, error) {
	d.note(ctx)
	return d.Driver.GetFile(ctx, p)
}

func (d *deadlines) DeleteFile(ctx context.Context, p, expected string) error {
	d.note(ctx)
	return d.Driver.DeleteFile(ctx, p, expected)
}

// RequestTimeout bounds each request Forget makes.
func TestForgetRequestTimeout(t *testing.T) {
	mem, err := store.OpenDriver(t.Context(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	d := &deadlines{Driver: mem}
	s := store.New(d, nil)
	defer s.Close()
	mustWrite(t, s, "kamal/a.md", "- a\n", "")
	mustWrite(t, s, "kamal/b.md", "- b\n", "")
	d.calls, d.without = 0, 0
	st, err := s.Forget(t.Context(), "kamal/", &store.ForgetOptions{RequestTimeout: time.Minute})
	if err != nil || st.Deleted != 2 {
		t.Fatalf("forget: %+v %v", st, err)
	}
	if d.calls == 0 || d.without != 0 {
		t.Fatalf("%d of %d reads and deletes had no deadline", d.without, d.calls)
	}
}
