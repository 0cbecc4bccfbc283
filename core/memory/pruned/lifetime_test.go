package pruned

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

// setLifetime rewrites the file at path unchanged with the given expiry
// and pin, as an operator's `agentmem pin` would.
func setLifetime(t *testing.T, s *store.Store, path string, expires time.Time, pinned bool) {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: f.Content, Expected: f.Version,
		Metadata: f.Metadata, ExpiresAt: expires, Pinned: pinned}); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, s *store.Store, path string) *store.File {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<20)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return f
}

// Retention never deletes a pinned file of the series, by count or by
// age, and does not count it: MaxFiles still keeps that many unpinned
// files.
func TestRotateKeepsPinned(t *testing.T) {
	bothPaths(t, nil, func(t *testing.T, s *store.Store) {
		const bound = 200
		if _, err := s.Write(t.Context(), store.WriteRequest{Path: seriesBase, Content: line(0) + "\n", Pinned: true}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 40; i++ {
			if _, err := AppendSeries(t.Context(), s, seriesBase, line(i), &memory.AppendOptions{OperationID: fmt.Sprint("p/", i), MaxMemorySize: bound},
				&RotateOptions{MaxFiles: 2}); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		files, lines := seriesLines(t, s, bound)
		if len(files) != 3 || files[0] != seriesBase || lines[0] != line(0) || lines[len(lines)-1] != line(39) {
			t.Fatalf("files %q, lines %q: want the pinned first file and the two newest", files, lines)
		}
		if f := readFile(t, s, seriesBase); !f.Pinned {
			t.Fatalf("%s lost its pin: %+v", seriesBase, f)
		}
	})
}

func TestRotateMaxAgeKeepsPinned(t *testing.T) {
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now = func() time.Time { return clock }
	t.Cleanup(func() { now = time.Now })
	s := store.New(memtest.NewDriver(t), nil)
	rot := &RotateOptions{MaxAge: 48 * time.Hour}
	for i := range 6 { // two lines a file: three files
		if _, err := AppendSeries(t.Context(), s, seriesBase, line(i), &memory.AppendOptions{OperationID: fmt.Sprint("p/", i), MaxMemorySize: 100}, rot); err != nil {
			t.Fatal(err)
		}
	}
	second := SeriesPath(seriesBase, 2)
	setLifetime(t, s, second, time.Time{}, true)
	clock = clock.Add(72 * time.Hour)
	if got, err := PruneSeries(t.Context(), s, seriesBase, rot); err != nil || !slices.Equal(got, []string{seriesBase}) {
		t.Fatalf("PruneSeries = %q, %v; want only the unpinned old file", got, err)
	}
	if files, _ := seriesLines(t, s, 100); !slices.Equal(files, []string{second, SeriesPath(seriesBase, 3)}) {
		t.Fatalf("files %q", files)
	}
}

// pinOnPlan pins one file right after the consolidation state is first
// written (the plan is stored, no edit written yet): the file is pinned
// after the plan was validated. It has the nine primitives only.
type pinOnPlan struct {
	driver.Driver
	pin  func()
	once sync.Once
}

func (d *pinOnPlan) CreateFile(ctx context.Context, f driver.File) error {
	err := d.Driver.CreateFile(ctx, f)
	if err == nil && strings.Contains(f.Path, "/"+StateDir+"/") {
		d.once.Do(d.pin)
	}
	return err
}

// Consolidation never empties a pinned file: an edit that replaces its
// text is refused with the reason, when the plan is validated and when
// the file was pinned after; appends still land, and the pin stays.
func TestConsolidatePinnedFile(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText, "u/main/travel.md": "# Travel\n"})
	setLifetime(t, s, "u/main/MEMORY.md", time.Time{}, true)
	setLifetime(t, s, "u/main/travel.md", time.Time{}, true)
	emptyIt := edits(replaceEdit(nil, "- lives in Hanoi", ""), replaceEdit("travel.md", "# Travel", ""))
	model := &scripted{answers: []string{emptyIt, emptyIt, edits(appendEdit(nil, "- lives in Da Nang"))}}
	if _, err := Consolidate(t.Context(), m, "u", model, nil); err == nil {
		t.Fatal("a plan that empties pinned files was accepted")
	}
	if u := model.requests[0].User; !strings.Contains(u, "keep it within") || !strings.Contains(u, "; pinned)") ||
		!strings.Contains(u, "travel.md (pinned)") {
		t.Fatalf("the request does not show the pins:\n%s", u)
	}
	if fb := model.requests[1].User; !strings.Contains(fb, "MEMORY.md is pinned") || !strings.Contains(fb, "travel.md is pinned") {
		t.Fatalf("the retry does not say why:\n%s", fb)
	}
	res, err := Consolidate(t.Context(), m, "u", model, nil)
	if err != nil || res.Applied != 1 {
		t.Fatalf("append to a pinned file: %+v, %v", res, err)
	}
	if f := readFile(t, s, "u/main/MEMORY.md"); f.Content != staleFact+"- lives in Da Nang\n" || !f.Pinned {
		t.Fatalf("MEMORY.md = %+v", f)
	}
	if f := readFile(t, s, "u/main/travel.md"); f.Content != "# Travel\n" || !f.Pinned {
		t.Fatalf("travel.md = %+v", f)
	}
	if !strings.Contains(DefaultConsolidationPrompt, `"(pinned)"`) {
		t.Fatal("the prompt does not say what a pinned file is")
	}
}

// A file pinned after the plan was validated is still not emptied: the
// edit is refused just before it is written, and re-asked.
func TestConsolidatePinnedAfterPlan(t *testing.T) {
	ms := memtest.NewDriver(t)
	other := store.New(keepOpenDriver{ms}, nil)
	d := &pinOnPlan{Driver: keepOpenDriver{ms}, pin: func() { setLifetime(t, other, "u/main/MEMORY.md", time.Time{}, true) }}
	s := store.New(d, nil)
	t.Cleanup(func() { _ = s.Close() })
	m := mustNew(t, s, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText})
	model := &scripted{answers: []string{theAnswer, edits()}}
	res, err := Consolidate(t.Context(), m, "u", model, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := memtest.Content(t, s, "u/main/MEMORY.md"); got != staleFact+"- prefers window seats; see travel.md\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
	if res.Applied != 2 || res.Asks != 2 || !strings.Contains(model.requests[1].User, "MEMORY.md is pinned") {
		t.Fatalf("result %+v; re-ask:\n%s", res, model.requests[1].User)
	}
}

// keepOpenDriver stops a store from closing a driver it shares.
type keepOpenDriver struct{ driver.Driver }

func (keepOpenDriver) Close() error { return nil }

// Consolidation proposes an expiry through its validated edits: the model
// is told the time and which files expire, an edit's expires gives its
// file the expiry, an expiry for MEMORY.md or a pinned file is refused,
// and an edit without one keeps its file's expiry.
func TestConsolidateProposesExpiry(t *testing.T) {
	m, s := newMem(t, nil)
	t0 := s.Now()
	sprint := t0.Add(10 * 24 * time.Hour).Truncate(time.Minute)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/sprint.md": "# Sprint\n", "u/main/keep.md": "# Keep\n",
		"u/main/pruned.md": "- user: I'm in Bangkok until Friday.\n- user: the sprint goal is the export.\n"})
	setLifetime(t, s, "u/main/sprint.md", sprint, false)
	setLifetime(t, s, "u/main/keep.md", time.Time{}, true)
	friday := t0.AddDate(0, 0, 3).UTC().Format(time.DateOnly)
	expiring := func(file, content, expires string) map[string]any {
		e := appendEdit(file, content)
		e["expires"] = expires
		return e
	}
	bad := edits(expiring("MEMORY.md", "- in Bangkok", friday), expiring("keep.md", "- x", "7d"))
	good := edits(expiring("trip.md", "- in Bangkok until Friday", friday), appendEdit("sprint.md", "- goal: the export"))
	model := &scripted{answers: []string{bad, good}}
	res, err := Consolidate(t.Context(), m, "u", model, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := model.requests[0].User
	if !strings.Contains(u, memory.FormatExpiry(t0)[:10]) || !strings.Contains(u, t0.UTC().Weekday().String()) ||
		!strings.Contains(u, "sprint.md (expires "+memory.FormatExpiry(sprint)+")") || !strings.Contains(u, "keep.md (pinned)") {
		t.Fatalf("the request does not show the time and lifetimes:\n%s", u)
	}
	if fb := model.requests[1].User; !strings.Contains(fb, "MEMORY.md never expires") || !strings.Contains(fb, "keep.md is pinned, so it never expires") {
		t.Fatalf("the retry does not say why:\n%s", fb)
	}
	if res.Applied != 2 || len(res.Edits) != 2 || res.Edits[0].Expires == nil || *res.Edits[0].Expires != friday {
		t.Fatalf("result %+v", res)
	}
	want, _ := time.Parse(time.DateOnly, friday)
	if f := readFile(t, s, "u/main/trip.md"); !f.ExpiresAt.Equal(want.AddDate(0, 0, 1)) || f.Pinned {
		t.Fatalf("trip.md = %+v, want it to expire when %s ends", f, friday)
	}
	if f := readFile(t, s, "u/main/sprint.md"); !f.ExpiresAt.Equal(sprint) || f.Content != "# Sprint\n- goal: the export\n" {
		t.Fatalf("sprint.md = %+v, want its expiry kept", f)
	}
	if f := readFile(t, s, "u/main/MEMORY.md"); !f.ExpiresAt.IsZero() || f.Content != staleFact {
		t.Fatalf("MEMORY.md = %+v", f)
	}
	if !strings.Contains(DefaultConsolidationPrompt, `"expires"`) {
		t.Fatal("the prompt does not offer expires")
	}
}

// The consolidation state file keeps its lifetime across the run's
// writes, as every write of an existing file does.
func TestConsolidateStateKeepsLifetime(t *testing.T) {
	m, s := newMem(t, nil)
	seed(t, s, map[string]string{"u/main/MEMORY.md": staleFact, "u/main/pruned.md": prunedText})
	model := &scripted{answers: []string{edits(appendEdit(nil, "- a"))}}
	if _, err := Consolidate(t.Context(), m, "u", model, nil); err != nil {
		t.Fatal(err)
	}
	state := "u/main/" + StateDir + "/pruned.md.json"
	setLifetime(t, s, state, time.Time{}, true)
	if _, err := memory.Append(t.Context(), s, "u/main/pruned.md", "- user: more", nil); err != nil {
		t.Fatal(err)
	}
	res, err := Consolidate(t.Context(), m, "u", model, nil)
	if err != nil || res.Applied != 1 {
		t.Fatalf("second run %+v, %v", res, err)
	}
	if f := readFile(t, s, state); !f.Pinned || !strings.Contains(f.Content, `"offset"`) {
		t.Fatalf("state = %+v, want its pin kept", f)
	}
}
