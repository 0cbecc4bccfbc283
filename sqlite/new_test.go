package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestNewNilArguments checks that a nil context and an empty path are
// refused with store.ErrNilArgument, before anything is created.
func TestNewNilArguments(t *testing.T) {
	dir := t.TempDir()
	var noCtx context.Context
	if _, err := New(noCtx, filepath.Join(dir, "m.db"), nil); !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("New(nil ctx): %v, want store.ErrNilArgument", err)
	}
	_, err := New(t.Context(), "", nil)
	if !errors.Is(err, store.ErrNilArgument) || !errors.Is(err, ErrInvalidPath) {
		t.Errorf(`New(""): %v, want store.ErrNilArgument and ErrInvalidPath`, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused New created %v", entries)
	}
}

// TestNoCreate checks Options.NoCreate: a missing file is refused with
// store.ErrStoreNotFound and not created, as is a file without the files
// table; an existing store opens.
func TestNoCreate(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	_, err := New(ctx, path, &Options{NoCreate: true})
	if !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("New(missing file, NoCreate): %v, want store.ErrStoreNotFound", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("New with NoCreate created %v", entries)
	}

	d := openTest(t, path, nil)
	if err := d.CreateFile(ctx, driver.File{Path: "a.md", Content: "kept", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openTest(t, path, &Options{NoCreate: true})
	if f, err := d.GetFile(ctx, "a.md"); err != nil || f == nil || f.Content != "kept" {
		t.Errorf("GetFile after New(NoCreate) = %+v, %v; want the file written before", f, err)
	}

	_, err = New(ctx, path, &Options{NoCreate: true, Table: "other"})
	if !errors.Is(err, store.ErrStoreNotFound) {
		t.Errorf("New(missing table, NoCreate): %v, want store.ErrStoreNotFound", err)
	}
	var n int
	if err := d.DB().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name LIKE 'other%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("New(missing table, NoCreate) created %d schema objects (%v)", n, err)
	}

	if _, err := os.Stat(filepath.Join(dir, "missing", "m.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if _, err := New(ctx, filepath.Join(dir, "missing", "m.db"), &Options{NoCreate: true}); !errors.Is(err, store.ErrStoreNotFound) {
		t.Errorf("New(missing directory, NoCreate): %v, want store.ErrStoreNotFound", err)
	}
}

// TestMutateErrorPrefix checks that the failed condition of a delete of a
// path expected absent says which package made it.
func TestMutateErrorPrefix(t *testing.T) {
	ctx := t.Context()
	d := openTest(t, filepath.Join(t.TempDir(), "m.db"), nil)
	if err := d.CreateFile(ctx, driver.File{Path: "a.md", Content: "x", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	_, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: "a.md"})
	if !errors.Is(err, driver.ErrPrecondition) || !strings.HasPrefix(err.Error(), "sqlite: ") {
		t.Errorf(`Mutate(delete, expected absent) = %v, want driver.ErrPrecondition with the prefix "sqlite: "`, err)
	}
}
