package pruned

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

const seriesBase = "kamal/main/pruned.md"

// historyDriver is a primitives-only driver that keeps history.
type historyDriver struct {
	*memtest.Driver
	driver.Historian
}

// bothPaths runs f on a store with memstore's fast paths (atomic mutation,
// appender) and on one over its nine primitives only.
func bothPaths(t *testing.T, opts *store.Options, f func(t *testing.T, s *store.Store)) {
	for _, name := range []string{"atomic", "primitives"} {
		t.Run(name, func(t *testing.T) {
			var s *store.Store
			if name == "atomic" {
				s = store.New(memtest.NewDriver(t), opts)
			} else {
				// The nine primitives, and history.
				ms := memtest.NewDriver(t)
				s = store.New(historyDriver{&memtest.Driver{Driver: ms}, ms}, opts)
			}
			t.Cleanup(func() { _ = s.Close() })
			f(t, s)
		})
	}
}

// seriesLines returns every line of every file of the series, oldest
// first, checking each file's bound.
func seriesLines(t *testing.T, s *store.Store, bound int) (files, lines []string) {
	t.Helper()
	files, err := SeriesPaths(t.Context(), s, seriesBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		c := memtest.Content(t, s, p)
		if n := notes.Runes(c); n > bound {
			t.Fatalf("%s has %d characters, over %d", p, n, bound)
		}
		lines = append(lines, strings.Split(strings.TrimSuffix(c, "\n"), "\n")...)
	}
	return files, lines
}

func line(i int) string { return fmt.Sprintf("- pruned line %03d: %s", i, strings.Repeat("x", 20)) }

func TestSeriesPath(t *testing.T) {
	for _, c := range []struct {
		path string
		n    int
		want string
	}{
		{"u/main/pruned.md", 1, "u/main/pruned.md"},
		{"u/main/pruned.md", 2, "u/main/pruned_0002.md"},
		{"u/main/pruned.md", 12345, "u/main/pruned_12345.md"},
		{"u/a.b/notes", 3, "u/a.b/notes_0003"},
		{"u/main/x.tar.gz", 2, "u/main/x.tar_0002.gz"},
	} {
		if got := SeriesPath(c.path, c.n); got != c.want {
			t.Errorf("SeriesPath(%q, %d) = %q, want %q", c.path, c.n, got, c.want)
		}
		if n, ok := seriesIndex(c.path, c.want); c.n > 1 && (!ok || n != c.n) {
			t.Errorf("seriesIndex(%q, %q) = %d, %v", c.path, c.want, n, ok)
		}
	}
	// Code-point order (the notebook's file list) is the series' order.
	names := []string{SeriesPath("pruned.md", 10), SeriesPath("pruned.md", 2), "pruned.md", SeriesPath("pruned.md", 9999)}
	slices.Sort(names)
	if want := []string{"pruned.md", "pruned_0002.md", "pruned_0010.md", "pruned_9999.md"}; !slices.Equal(names, want) {
		t.Fatalf("sorted %q", names)
	}
	for _, p := range []string{"u/main/pruned_2.md", "u/main/pruned_0001.md", "u/main/pruned_x.md", "u/main/pruned_0002.txt"} {
		if _, ok := seriesIndex("u/main/pruned.md", p); ok {
			t.Errorf("%s counted as a rotated file", p)
		}
	}
}

// 60 appends to a series bounded at 300 characters: none fails, each line
// lands once, in order, across the files; a replay of all of them is
// answered from the receipts and changes nothing.
func TestAppendRotates(t *testing.T) {
	bothPaths(t, nil, func(t *testing.T, s *store.Store) {
		const bound = 300
		opts := func(i int) *memory.AppendOptions {
			return &memory.AppendOptions{OperationID: fmt.Sprintf("prune/%d", i), MaxMemorySize: bound}
		}
		var want []string
		versions := map[int]string{}
		for i := range 60 {
			m, err := AppendSeries(t.Context(), s, seriesBase, line(i), opts(i), nil)
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			versions[i] = m.Version
			want = append(want, line(i))
		}
		files, lines := seriesLines(t, s, bound)
		if !slices.Equal(lines, want) {
			t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
		}
		if len(files) < 5 || files[1] != "kamal/main/pruned_0002.md" {
			t.Fatalf("files %q", files)
		}
		for i := range 60 {
			m, err := AppendSeries(t.Context(), s, seriesBase, line(i), opts(i), nil)
			if err != nil || !m.Replayed || m.Version != versions[i] {
				t.Fatalf("replay %d: %+v, %v", i, m, err)
			}
		}
		if files2, lines2 := seriesLines(t, s, bound); !slices.Equal(files2, files) || !slices.Equal(lines2, want) {
			t.Fatalf("after the replay: %q\n%s", files2, strings.Join(lines2, "\n"))
		}
		// The model sees the series in its file list, in order.
		m := mustNew(t, s, nil)
		b, err := m.Snapshot(t.Context(), "kamal")
		if err != nil {
			t.Fatal(err)
		}
		if i, j := strings.Index(b, "- pruned.md\n"), strings.Index(b, "- pruned_0002.md\n"); i < 0 || j < i {
			t.Fatalf("snapshot %q", b)
		}
	})
}

// The original landed in pruned.md and its reply was lost; pruned.md then
// filled up and the series moved on. The retry is answered from the
// receipt (Replayed, the original version) and lands nowhere else; so is
// a retry of an append made by a plain memory.Append before rotation was on.
func TestAppendRotateReplayAcrossBoundary(t *testing.T) {
	bothPaths(t, nil, func(t *testing.T, s *store.Store) {
		const bound = 200
		rot := func(op string) *memory.AppendOptions {
			return &memory.AppendOptions{OperationID: op, MaxMemorySize: bound}
		}
		plain, err := memory.Append(t.Context(), s, seriesBase, "- plain", &memory.AppendOptions{OperationID: "plain", MaxMemorySize: bound})
		if err != nil {
			t.Fatal(err)
		}
		orig, err := AppendSeries(t.Context(), s, seriesBase, "- the original", rot("lost"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			if _, err := AppendSeries(t.Context(), s, seriesBase, line(i), rot(fmt.Sprint("fill/", i)), nil); err != nil {
				t.Fatal(err)
			}
			if files, _ := seriesLines(t, s, bound); len(files) == 3 {
				break
			}
		}
		again, err := AppendSeries(t.Context(), s, seriesBase, "- the original", rot("lost"), nil)
		if err != nil || !again.Replayed || again.Version != orig.Version {
			t.Fatalf("retry: %+v, %v (original %+v)", again, err, orig)
		}
		againPlain, err := AppendSeries(t.Context(), s, seriesBase, "- plain", rot("plain"), nil)
		if err != nil || !againPlain.Replayed || againPlain.Version != plain.Version {
			t.Fatalf("retry of the plain append: %+v, %v (original %+v)", againPlain, err, plain)
		}
		_, lines := seriesLines(t, s, bound)
		for _, l := range []string{"- the original", "- plain"} {
			if n := slices.Index(lines, l); n < 0 || slices.Index(lines[n+1:], l) >= 0 {
				t.Fatalf("%q not exactly once:\n%s", l, strings.Join(lines, "\n"))
			}
		}
		// Other text under the same id is still refused.
		if _, err := AppendSeries(t.Context(), s, seriesBase, "- other", rot("lost"), nil); !errors.Is(err, store.ErrOperationConflict) {
			t.Fatalf("reused id: %v", err)
		}
	})
}

// Eight jobs append concurrently to a small series, each delivered twice
// at the same time: every line lands exactly once across the files, and
// no append fails.
func TestAppendRotateConcurrent(t *testing.T) {
	bothPaths(t, nil, func(t *testing.T, s *store.Store) {
		const bound, jobs, per = 150, 8, 6
		var wg sync.WaitGroup
		for job := range jobs {
			for range 2 {
				wg.Go(func() {
					for i := range per {
						text := fmt.Sprintf("- job %d line %d %s", job, i, strings.Repeat("y", 30))
						if _, err := AppendSeries(t.Context(), s, seriesBase, text,
							&memory.AppendOptions{OperationID: fmt.Sprintf("job/%d/%d", job, i), MaxMemorySize: bound}, nil); err != nil {
							t.Errorf("job %d line %d: %v", job, i, err)
						}
					}
				})
			}
		}
		wg.Wait()
		files, lines := seriesLines(t, s, bound)
		if len(lines) != jobs*per {
			t.Fatalf("%d lines in %d files:\n%s", len(lines), len(files), strings.Join(lines, "\n"))
		}
		for job := range jobs {
			for i := range per {
				prefix := fmt.Sprintf("- job %d line %d ", job, i)
				if n := len(slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, prefix) })); n != 1 {
					t.Fatalf("%q %d times", prefix, n)
				}
			}
		}
	})
}

// An entry longer than the bound on its own is refused, nothing written.
func TestAppendRotateEntryTooLarge(t *testing.T) {
	s := store.New(memtest.NewDriver(t), nil)
	_, err := AppendSeries(t.Context(), s, seriesBase, strings.Repeat("z", 100), &memory.AppendOptions{MaxMemorySize: 100}, &RotateOptions{})
	if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "the entry alone is 101 characters") {
		t.Fatalf("err = %v", err)
	}
	if p, err := s.ListPaths(t.Context(), "kamal/", 10); err != nil || len(p) != 0 {
		t.Fatalf("files %q, %v", p, err)
	}
	// Exactly the bound fits.
	if _, err := AppendSeries(t.Context(), s, seriesBase, strings.Repeat("z", 99), &memory.AppendOptions{MaxMemorySize: 100}, &RotateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// MaxFiles keeps the newest files; each delete is recorded in history,
// named as the retention's, and can be undone with Restore.
func TestRotateMaxFiles(t *testing.T) {
	bothPaths(t, &store.Options{History: &store.HistoryOptions{}}, func(t *testing.T, s *store.Store) {
		const bound = 200
		for i := range 40 {
			if _, err := AppendSeries(t.Context(), s, seriesBase, line(i), &memory.AppendOptions{OperationID: fmt.Sprint("p/", i), MaxMemorySize: bound},
				&RotateOptions{MaxFiles: 2, Metadata: map[string]string{memory.ClientKey: "pruner"}}); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		files, lines := seriesLines(t, s, bound)
		if len(files) != 2 || files[0] == seriesBase {
			t.Fatalf("files %q", files)
		}
		if lines[len(lines)-1] != line(39) {
			t.Fatalf("lines %q", lines)
		}
		page, err := s.History(t.Context(), store.HistoryRequest{Path: seriesBase, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		del := page.Entries[0]
		if !del.Deleted || del.Metadata[memory.UpdatedByKey] != RetentionUpdatedBy || del.Metadata[memory.ClientKey] != "pruner" || del.Metadata[RetentionReasonKey] != "past 2 files" {
			t.Fatalf("newest history entry of pruned.md: %+v", del)
		}
		if _, err := s.Restore(t.Context(), store.RestoreRequest{Path: seriesBase, Version: page.Entries[1].Version}); err != nil {
			t.Fatal(err)
		}
		if c := memtest.Content(t, s, seriesBase); !strings.HasPrefix(c, line(0)+"\n") {
			t.Fatalf("restored %q", c)
		}
	})
}

// MaxAge deletes the old files whose last append is older, never the
// newest file.
func TestRotateMaxAge(t *testing.T) {
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	s := store.New(memtest.NewDriver(t), nil)
	rot := &RotateOptions{MaxAge: 48 * time.Hour}
	add := func(i int) {
		t.Helper()
		if _, err := AppendSeries(t.Context(), s, seriesBase, line(i), &memory.AppendOptions{OperationID: fmt.Sprint("p/", i), MaxMemorySize: 100}, rot); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 { // two lines a file: three files
		add(i)
	}
	clock = clock.Add(72 * time.Hour)
	if got, err := PruneSeries(t.Context(), s, seriesBase, rot); err != nil || !slices.Equal(got, []string{seriesBase, SeriesPath(seriesBase, 2)}) {
		t.Fatalf("PruneSeries = %q, %v", got, err)
	}
	if files, _ := seriesLines(t, s, 100); !slices.Equal(files, []string{SeriesPath(seriesBase, 3)}) {
		t.Fatalf("files %q", files)
	}
	// The newest file is kept however old; it goes once the series moves on.
	clock = clock.Add(72 * time.Hour)
	add(6)
	add(7)
	if files, _ := seriesLines(t, s, 100); !slices.Equal(files, []string{SeriesPath(seriesBase, 4)}) {
		t.Fatalf("files %q", files)
	}
}

// A rotating queue remembers the newest file: it lists the series only
// when it starts and at each boundary, and every line lands once.
func TestAppendQueueRotates(t *testing.T) {
	d := memtest.NewCounting()
	s := store.New(d, nil)
	m := mustNew(t, s, &memory.Options{Limits: memory.Limits{MaxMemorySize: 200}})
	q := mustQueue(t, m, &QueueOptions{Rotate: &RotateOptions{}})
	var want []string
	for i := range 40 {
		if err := q.Add(t.Context(), seriesBase, line(i), fmt.Sprint("q/", i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, line(i))
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	listings := 0 // of the series (creates list one entry below their path)
	for _, limit := range d.ListLimits() {
		if limit == seriesWalkPage {
			listings++
		}
	}
	files, lines := seriesLines(t, s, 200)
	if !slices.Equal(lines, want) {
		t.Fatalf("lines %q", lines)
	}
	if len(files) < 5 || listings != len(files) { // once at the start, once per boundary
		t.Fatalf("%d listings for %d files", listings, len(files))
	}
}
