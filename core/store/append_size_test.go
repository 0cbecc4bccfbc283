package store_test

import (
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestAppendSizeAfterTrim checks that Append bounds the file it would
// write, after trimming the old content's trailing whitespace, alike with
// and without a driver.Appender: a file over MaxChars only by trailing
// whitespace still takes an entry that fits, and one that does not fit is
// ErrTooLarge either way.
func TestAppendSizeAfterTrim(t *testing.T) {
	for name, d := range map[string]driver.Driver{"appender": newMemDriver(t), "primitives": plain{newMemDriver(t)}} {
		s := store.New(d, nil)
		ctx := t.Context()
		for path, old := range map[string]string{"a.md": "ab \n\n\n", "blank.md": "  \t\n"} {
			if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: old}); err != nil {
				t.Fatal(err)
			}
		}
		// "ab\nü\n" is 5 runes; the stored "ab \n\n\n" is 6.
		if _, err := s.Append(ctx, store.AppendRequest{Path: "a.md", Text: "ü", MaxChars: 5}); err != nil {
			t.Errorf("%s: append that fits after trimming: %v", name, err)
		} else if f, err := s.Read(ctx, "a.md", 10); err != nil || f.Content != "ab\nü\n" {
			t.Errorf("%s: content %+v, %v", name, f, err)
		}
		if _, err := s.Append(ctx, store.AppendRequest{Path: "blank.md", Text: "ü", MaxChars: 2}); err != nil {
			t.Errorf("%s: append to a blank file over the bound: %v", name, err)
		}
		if _, err := s.Append(ctx, store.AppendRequest{Path: "a.md", Text: "x", MaxChars: 6}); !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("%s: append over the bound = %v, want ErrTooLarge", name, err)
		}
	}
}
