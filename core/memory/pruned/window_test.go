package pruned

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/store"
)

// TestWindowCut checks where a window cuts: at the first preferred start
// among the last Max items, else the first allowed one, never when
// neither is in reach, and one item more when the memory block will need
// an item of its own.
func TestWindowCut(t *testing.T) {
	m, _ := newMem(t, nil)
	// u: user text, a: assistant, r: a tool result.
	items := func(kinds string) WindowItems {
		return WindowItems{
			N:        len(kinds),
			Prefer:   func(i int) bool { return kinds[i] == 'u' },
			Allow:    func(i int) bool { return kinds[i] != 'r' },
			UserText: func(i int) bool { return kinds[i] == 'u' },
		}
	}
	for _, tc := range []struct {
		kinds string
		max   int
		block bool
		want  int
	}{
		{"uaua", 0, false, 0},   // off
		{"uaua", 4, false, 0},   // fits
		{"uauaua", 3, false, 4}, // the user item of the last three
		{"uaraar", 3, false, 3}, // no user item in reach: the first allowed
		{"urrrrr", 3, false, 0}, // nothing can start them: sent whole
		{"uauaaa", 4, true, 2},  // the kept ones hold user text: as without a block
		{"uaaaaa", 3, true, 4},  // no user text kept: one item less
		{"uaaaaa", 1, true, 5},  // Max 1 keeps one item even so
	} {
		w, err := NewWindow(m, &WindowOptions{Max: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		if got := w.Cut(items(tc.kinds), tc.block); got != tc.want {
			t.Errorf("Cut(%q, max %d, block %v) = %d, want %d", tc.kinds, tc.max, tc.block, got, tc.want)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWindowAdd checks that a window appends each pruned item once per
// key, to File in the namespace's scope, across windows (a restart).
func TestWindowAdd(t *testing.T) {
	m, s := newMem(t, nil)
	ctx := t.Context()
	for _, texts := range [][]string{{"one", "two"}, {"one again", "two again", "three"}} {
		w, err := NewWindow(m, &WindowOptions{Max: 2, Op: "test-prune:"})
		if err != nil {
			t.Fatal(err)
		}
		path, err := w.Path(ctx, "kamal")
		if err != nil {
			t.Fatal(err)
		}
		if path != "kamal/main/"+DefaultFile {
			t.Fatalf("path %q", path)
		}
		var items []Item
		for i, text := range texts {
			items = append(items, Item{Key: string(rune('a' + i)), Text: Format("user", []string{text})})
		}
		if err := w.Add(ctx, "kamal", path, items); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(ctx, "kamal", path, items); !errors.Is(err, ErrQueueClosed) {
			t.Fatalf("Add after Close: %v", err)
		}
	}
	if got, want := memtest.Content(t, s, "kamal/main/"+DefaultFile), "- user: one\n- user: two\n- user: three\n"; got != want {
		t.Fatalf("pruned file %q, want %q", got, want)
	}
}

// TestWindowErrors checks NewWindow's failures, and that no constructor
// of the pipeline panics on a nil notebook.
func TestWindowErrors(t *testing.T) {
	var nilMem *memory.Memory
	if _, err := NewWindow(nilMem, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("nil Memory: %v", err)
	}
	if _, err := NewAppendQueue(nilMem, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewAppendQueue, nil Memory: %v", err)
	}
	model := ModelFunc(func(context.Context, ModelRequest) (ModelResponse, error) { return ModelResponse{}, nil })
	if _, err := NewTrigger(nilMem, TriggerOptions{Model: model}); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewTrigger, nil Memory: %v", err)
	}
	if _, err := Consolidate(t.Context(), nilMem, "u", model, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("Consolidate, nil Memory: %v", err)
	}
	m, _ := newMem(t, nil)
	if _, err := NewWindow(m, &WindowOptions{Consolidate: &TriggerOptions{}}); !errors.Is(err, ErrNilModel) {
		t.Errorf("Consolidate without a Model: %v", err)
	}
}

// TestFormat checks the rendering of a pruned item.
func TestFormat(t *testing.T) {
	if got := Format("tool `x`", []string{"a\nb", "c"}); got != "- tool `x`: a\n  b\n  c" {
		t.Errorf("got %q", got)
	}
	if got := Format("unknown", nil); got != "- unknown: (no text)" {
		t.Errorf("got %q", got)
	}
}

// TestWindowOpIDs checks that the operation ids are those the adk and eino
// windows used before Window (the hash of path and key, each followed by a
// zero byte), so a restart after an upgrade appends nothing twice.
func TestWindowOpIDs(t *testing.T) {
	h := sha256.New()
	for _, p := range []string{"kamal/main/pruned.md", "id:e1"} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	if got, want := opDigest("kamal/main/pruned.md", "id:e1"), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("opDigest = %s, want %s", got, want)
	}
}
