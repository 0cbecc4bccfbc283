package memory

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"

	"github.com/agentmem/agentmem/core/store"
)

// A capitalised ".MD" and any case of MEMORY.md name the file the model
// means, never a second notebook beside it (issue 26, item 10).
func TestNameCaseResolves(t *testing.T) {
	m, s := newMem(t, nil)
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- one", "file": nil}))
	for _, file := range []string{"MEMORY.MD", "memory.md", "Memory.Md", "MEMORY"} {
		w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- " + file, "file": file}))
		if w.File != MainFile || w.Status != "appended" {
			t.Fatalf("write %s: %+v, want an append to %s", file, w, MainFile)
		}
	}
	w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- x", "file": "travel.MD"}))
	if w.File != "travel.md" {
		t.Fatalf("travel.MD wrote %q, want travel.md", w.File)
	}
	if got := call(t, m, inv(""), "read_memory", map[string]any{"file": "TRAVEL.md"}); got == nil {
		t.Fatal("nil read")
	}
	wantToolErr(t, call(t, m, inv(""), "delete_memory", map[string]any{"file": "memory.MD"}), "cannot be deleted")
	paths, err := s.ListPaths(t.Context(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths, " ") != "main/MEMORY.md main/travel.md" {
		t.Fatalf("files %v, want main/MEMORY.md and main/travel.md only", paths)
	}
}

// A name that equals an existing file's case-insensitively reaches no
// other file: creating it is refused, reading or deleting it says which
// file exists, and the error names that file.
func TestNameCaseVariantRefused(t *testing.T) {
	m, s := newMem(t, nil)
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- Bangkok", "file": "travel.md"}))
	for _, args := range []map[string]any{
		{"content": "- Hanoi", "file": "Travel.md"},
		{"content": "- Hanoi", "file": "TRAVEL"},
		{"content": "- Hanoi", "file": "Travel.md", "old_text": "Bangkok"},
	} {
		wantToolErr(t, call(t, m, inv(""), "write_memory", args), `"travel.md"`)
	}
	wantToolErr(t, call(t, m, inv(""), "read_memory", map[string]any{"file": "Travel.md"}), `"travel.md"`)
	wantToolErr(t, call(t, m, inv(""), "delete_memory", map[string]any{"file": "TRAVEL.md"}), `"travel.md"`)
	paths, err := s.ListPaths(t.Context(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths, " ") != "main/travel.md" || memtest.Content(t, s, "main/travel.md") != "- Bangkok\n" {
		t.Fatalf("files %v, travel.md %q: want travel.md alone, unchanged", paths, memtest.Content(t, s, "main/travel.md"))
	}
	// A name that is not a case variant is still created; an exact name
	// wins when variants were made outside the notebook.
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- x", "file": "travels.md"}))
	memtest.Put(t, s, "main/Travel.md", "- by hand\n")
	if w := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- y", "file": "Travel.md"})); w.File != "Travel.md" {
		t.Fatalf("exact name wrote %q", w.File)
	}
	if got := call(t, m, inv(""), "read_memory", map[string]any{"file": "Travel.md"}); got != "- by hand\n- y\n" {
		t.Fatalf("read Travel.md = %#v", got)
	}
	// Other namespaces' files are no variants.
	memtest.Put(t, s, "bob/main/notes.md", "x")
	wantWrite(t, call(t, m, inv("ana"), "write_memory", map[string]any{"content": "- z", "file": "Notes.md"}))
}

// A replayed create returns its original result even when a case variant
// appeared since.
func TestNameCaseVariantReplay(t *testing.T) {
	for _, mode := range []string{"atomic", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			var s *store.Store
			if mode == "atomic" {
				s = store.New(memtest.NewDriver(t), nil)
			} else {
				s = store.New(memtest.NewCounting(), nil)
			}
			m := mustNew(t, s, nil)
			in := inv("")
			args := map[string]any{"content": "- one", "file": "Travel.md"}
			first := wantWrite(t, call(t, m, in, "write_memory", args))
			f, err := s.Read(t.Context(), "main/Travel.md", 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(t.Context(), store.DeleteRequest{Path: "main/Travel.md", Expected: f.Version}); err != nil {
				t.Fatal(err)
			}
			memtest.Put(t, s, "main/travel.md", "- other\n")
			again := wantWrite(t, call(t, m, in, "write_memory", args))
			if !again.Replayed || again.Version != first.Version {
				t.Fatalf("replay %+v, want the original %+v replayed", again, first)
			}
		})
	}
}
