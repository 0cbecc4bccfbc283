package filestore_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/store"
)

// TestURLCreateFalse: file:DIR?create=false opens only a directory that
// exists, and creates nothing.
func TestURLCreateFalse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if _, err := store.OpenDriver(t.Context(), "file:"+dir+"?create=false"); !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("err = %v, want ErrStoreNotFound", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the directory was created: %v", err)
	}
	d, err := store.OpenDriver(t.Context(), "file:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = store.OpenDriver(t.Context(), "file:"+dir+"?create=false")
	if err != nil {
		t.Fatalf("an existing directory with create=false: %v", err)
	}
	d.Close()
}
