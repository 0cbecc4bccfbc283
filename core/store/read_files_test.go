package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestReadFiles reads files in batches, with and without the driver's
// batched read: the files that exist in the order asked, each cut as Read
// cuts it, absent and deleted paths left out, a path asked twice once;
// bad arguments are refused.
func TestReadFiles(t *testing.T) {
	ctx := context.Background()
	for name, d := range map[string]driver.Driver{"batched": newMemDriver(t), "one by one": plain{newMemDriver(t)}} {
		t.Run(name, func(t *testing.T) {
			s := store.New(d, nil)
			defer s.Close()
			var paths []string
			for i := range 300 { // more than one batch
				p := fmt.Sprintf("u/main/n%03d.md", i)
				if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: fmt.Sprintf("note %d ünï\n", i)}); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			f, _ := s.Read(ctx, "u/main/n007.md", 1)
			if _, err := s.Delete(ctx, store.DeleteRequest{Path: "u/main/n007.md", Expected: f.Version}); err != nil {
				t.Fatal(err)
			}
			ask := append([]string{"u/main/n299.md", "u/main/absent.md", "u/main/n299.md"}, paths...)
			files, err := s.ReadFiles(ctx, ask, 8)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 299 || files[0].Path != "u/main/n299.md" || files[1].Path != "u/main/n000.md" {
				t.Fatalf("%d files, first %v: want 299 (n007 deleted, absent left out, n299 once and first)", len(files), files[:2])
			}
			for _, f := range files {
				want, err := s.Read(ctx, f.Path, 8)
				if err != nil || f.Content != want.Content || f.Version != want.Version || f.Truncated != want.Truncated {
					t.Fatalf("%s: %+v, Read gives %+v (%v)", f.Path, f, want, err)
				}
			}
			if _, err := s.ReadFiles(ctx, []string{"u/../x"}, 8); !errors.Is(err, store.ErrInvalidPath) {
				t.Errorf("a bad path: %v, want ErrInvalidPath", err)
			}
			if _, err := s.ReadFiles(ctx, paths, 0); !errors.Is(err, store.ErrInvalidBound) {
				t.Errorf("max_chars 0: %v, want ErrInvalidBound", err)
			}
			var nilCtx context.Context
			if _, err := s.ReadFiles(nilCtx, paths, 8); !errors.Is(err, store.ErrNilArgument) {
				t.Errorf("a nil context: %v, want ErrNilArgument", err)
			}
			if files, err := s.ReadFiles(ctx, nil, 8); err != nil || len(files) != 0 {
				t.Errorf("no paths: %v %v", files, err)
			}
		})
	}
}
