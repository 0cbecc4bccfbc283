package sqlite

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// A compare-and-swap that lost its race fails without the writer slot:
// with the slot held by another writer, a stale replace, delete or
// mutation still returns driver.ErrPrecondition at once.
func TestLosingAttemptSkipsWriterSlot(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	ctx := t.Context()
	if err := d.CreateFile(ctx, driver.File{Path: "u/f.md", Content: "a", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	release, err := d.lockWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := d.ReplaceFile(ctx, driver.File{Path: "u/f.md", Content: "b", Version: "v2"}, "v0"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("replace: %v", err)
	}
	if err := d.DeleteFile(ctx, "u/f.md", "v0"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete: %v", err)
	}
	_, err = d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "u/f.md", Content: "b", Expected: "v0", Version: "v2",
		Receipt: &driver.Receipt{ID: "op", Fingerprint: "fp", Kind: driver.KindWrite, Path: "u/f.md", Version: "v2", Completed: true}})
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("mutate: %v", err)
	}
}
