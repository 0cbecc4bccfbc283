package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"

	"github.com/agentmem/agentmem/core/store"
)

// Eight jobs append concurrently, each one retried (a second delivery of
// the same job runs at the same time): every line lands exactly once.
func TestAppendConcurrentJobsLandOnce(t *testing.T) {
	for _, name := range []string{"atomic", "primitives"} {
		t.Run(name, func(t *testing.T) {
			var s *store.Store
			if name == "atomic" {
				s = store.New(memtest.NewDriver(t), nil)
			} else {
				s = store.New(memtest.NewCounting(), nil)
			}
			m := mustNew(t, s, nil)
			const path = "kamal/main/pruned.md"
			var wg sync.WaitGroup
			for job := range 8 {
				for range 2 {
					wg.Go(func() {
						_, err := Append(t.Context(), s, path, fmt.Sprintf("- pruned %d\n\n", job),
							&AppendOptions{OperationID: fmt.Sprintf("prune/%d", job)})
						if err != nil {
							t.Errorf("job %d: %v", job, err)
						}
					})
				}
			}
			// The model writes the same file meanwhile.
			wg.Go(func() {
				if _, err := m.Call(t.Context(), inv("kamal"), "write_memory", mustJSON(t, map[string]any{"content": "- from the model", "file": "pruned"})); err != nil {
					t.Error(err)
				}
			})
			wg.Wait()
			got := memtest.Content(t, s, path)
			for job := range 8 {
				if strings.Count(got, fmt.Sprintf("- pruned %d\n", job)) != 1 {
					t.Fatalf("job %d not exactly once:\n%s", job, got)
				}
			}
			if strings.Count(got, "- from the model\n") != 1 || strings.Count(got, "\n") != 9 {
				t.Fatalf("content:\n%s", got)
			}
			// The file is listed in the snapshot and searchable.
			if b := snapshot(t, m, "kamal"); !strings.Contains(b, "- pruned.md") {
				t.Fatalf("snapshot %q", b)
			}
			r := call(t, m, inv("kamal"), "search_memory", map[string]any{"query": "pruned"}).(*SearchResult)
			if len(r.Matches) != 1 || r.Matches[0].File != "pruned.md" {
				t.Fatalf("search %+v", r)
			}
		})
	}
}

func TestAppend(t *testing.T) {
	s := store.New(memtest.NewDriver(t), nil)
	ctx := t.Context()
	const path = "ana/main/notes.md"
	first, err := Append(ctx, s, path, "- a", &AppendOptions{OperationID: "job-1"})
	if err != nil || first.Replayed || first.Existed {
		t.Fatalf("first %+v %v", first, err)
	}
	again, err := Append(ctx, s, path, "- a", &AppendOptions{OperationID: "job-1"})
	if err != nil || !again.Replayed || again.Version != first.Version {
		t.Fatalf("replay %+v %v", again, err)
	}
	if _, err := Append(ctx, s, path, "- other", &AppendOptions{OperationID: "job-1"}); !errors.Is(err, store.ErrOperationConflict) {
		t.Fatalf("reused id: %v", err)
	}
	if _, err := Append(ctx, s, path, "- b  \n", nil); err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, path); got != "- a\n- b\n" {
		t.Fatalf("content %q", got)
	}
	if mu, err := Append(ctx, s, path, " \n ", nil); err != nil || mu != (store.Mutation{}) {
		t.Fatalf("blank: %+v %v", mu, err)
	}
	if _, err := Append(ctx, s, path, "- this is too long", &AppendOptions{MaxMemorySize: 10}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, err := Append(ctx, s, path, "- c", &AppendOptions{MaxMemorySize: 3}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("already too large: %v", err)
	}
	if got := memtest.Content(t, s, path); got != "- a\n- b\n" {
		t.Fatalf("refused appends changed the file: %q", got)
	}
	if _, err := Append(ctx, s, "../x", "y", nil); !errors.Is(err, store.ErrInvalidPath) {
		t.Fatalf("bad path: %v", err)
	}
	if _, err := Append(ctx, s, path, "- m", &AppendOptions{Metadata: map[string]string{"updated_by": "pruner"}}); err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Read(ctx, path, 100); f.Metadata["updated_by"] != "pruner" {
		t.Fatalf("metadata %v", f.Metadata)
	}

	d := memtest.NewCounting()
	cs := store.New(d, nil)
	memtest.Put(t, cs, path, "- existing\n") // conflicts then hit ReplaceFile, once per attempt
	// No fixed attempt count: without a deadline, 40 conflicts in a row
	// are outlasted (the backoff grows, capped)...
	d.Conflicts = 40
	if _, err := Append(ctx, cs, path, "x", &AppendOptions{OperationID: "retry"}); err != nil {
		t.Fatalf("40 conflicts: %v", err)
	}
	if got := memtest.Content(t, cs, path); got != "- existing\nx\n" {
		t.Fatalf("after conflicts: %q", got)
	}
	// ...and a deadline bounds an append that keeps conflicting: the
	// conflict and the context's error, nothing written.
	d.Conflicts = 1 << 30
	dctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err = Append(dctx, cs, path, "y", nil)
	if !errors.Is(err, store.ErrConflict) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	d.Conflicts = 0
	if got := memtest.Content(t, cs, path); got != "- existing\nx\n" {
		t.Fatalf("after a deadline: %q", got)
	}
}

// TestAppendNilStore checks that Append over a nil store fails with
// store.ErrNoDriver instead of panicking.
func TestAppendNilStore(t *testing.T) {
	if _, err := Append(t.Context(), nil, "ana/main/notes.md", "- a", nil); !errors.Is(err, store.ErrNoDriver) {
		t.Fatalf("nil store: %v, want store.ErrNoDriver", err)
	}
}
