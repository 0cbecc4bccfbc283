package postgres

import (
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// Appends keep NUL exact: to a file holding one, and with one in the text
// (the append function then works on content_bytes), trimming the same
// trailing space as elsewhere.
func TestAppendKeepsNUL(t *testing.T) {
	url := testURL(t)
	pool := newPool(t, url, nil, 4)
	d, err := New(t.Context(), pool, &Options{Table: uniqueTable(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d, nil)
	ctx := t.Context()
	const path = "u/main/log.md"
	if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "a\x00b \u3000\n\n"}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"c\x00d", "é"} {
		if _, err := s.Append(ctx, store.AppendRequest{Path: path, Text: text + " \n", MaxChars: 100}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := s.Read(ctx, path, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\x00b\nc\x00d\né\n"; f.Content != want {
		t.Fatalf("content %q, want %q", f.Content, want)
	}
	if _, err := s.Append(ctx, store.AppendRequest{Path: path, Text: "xy", MaxChars: 12}); err == nil {
		t.Fatal("an append over the bound landed")
	}
	if _, err := s.Append(ctx, store.AppendRequest{Path: path, Text: "x", MaxChars: 12}); err != nil {
		t.Fatalf("an append at the bound (12 runes): %v", err)
	}
}
