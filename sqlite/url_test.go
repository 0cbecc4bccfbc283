package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/sqlite"
)

// roundTrip writes a file through s, reads it back, and closes s.
func roundTrip(t *testing.T, s *store.Store) {
	t.Helper()
	defer s.Close()
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/MEMORY.md", Content: "- by URL\n"}); err != nil {
		t.Fatal(err)
	}
	f, err := s.Read(t.Context(), "u/main/MEMORY.md", 100)
	if err != nil || f.Content != "- by URL\n" {
		t.Fatalf("read = %+v, %v", f, err)
	}
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "abs.db")
	s, err := store.Open(t.Context(), "sqlite://"+filepath.ToSlash(abs)+"?table=by_url&busy_timeout=5s", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Driver().(*sqlite.Driver)
	if d.Path() != abs || d.Table() != "by_url" {
		t.Errorf("driver path %q table %q, want %q by_url", d.Path(), d.Table(), abs)
	}
	roundTrip(t, s)

	t.Chdir(dir)
	s, err = store.Open(t.Context(), "sqlite:rel.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
	if _, err := os.Stat(filepath.Join(dir, "rel.db")); err != nil {
		t.Errorf("relative URL: %v", err)
	}
}

func TestOpenURLRefusesBadURLs(t *testing.T) {
	for _, u := range []string{
		"sqlite:",             // no path
		"sqlite://host/x.db",  // a host
		"sqlite:x.db?tabel=t", // a misspelt parameter
		"sqlite:x.db?busy_timeout=soon",
		"sqlite:x.db?table=a&table=b",
		"sqlite:x.db?table=",        // empty: not the default table in silence
		"sqlite:x.db?busy_timeout=", // empty: not the default timeout in silence
	} {
		if _, err := store.Open(t.Context(), u, nil); !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL", u, err)
		}
	}
	if _, err := store.Open(t.Context(), "sqlite:x.db?table=1bad", nil); !errors.Is(err, sqlite.ErrInvalidTable) {
		t.Errorf("bad table: %v, want ErrInvalidTable", err)
	}
}

// TestURLCreateFalse: sqlite:FILE?create=false opens only a database
// that exists, and creates nothing.
func TestURLCreateFalse(t *testing.T) {
	db := filepath.Join(t.TempDir(), "missing.db")
	if _, err := store.OpenDriver(t.Context(), "sqlite:"+db+"?create=false"); !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("err = %v, want ErrStoreNotFound", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the file was created: %v", err)
	}
	s, err := store.Open(t.Context(), "sqlite:"+db, nil)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s)
	s, err = store.Open(t.Context(), "sqlite:"+db+"?create=false", nil)
	if err != nil {
		t.Fatalf("an existing database with create=false: %v", err)
	}
	defer s.Close()
	if _, err := s.Read(t.Context(), "u/main/MEMORY.md", 100); err != nil {
		t.Fatalf("read through create=false: %v", err)
	}
}
