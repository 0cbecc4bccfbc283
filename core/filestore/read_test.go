package filestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// newDriver opens a driver on dir, failing t on error.
func newDriver(t *testing.T, dir string) *Driver {
	t.Helper()
	d, err := New(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestReadScope: only regular files (and links that stay inside) directly
// in the scope, sorted, each cut to MaxChars runes; temporary files,
// folders, escaping links and symlinked scopes are left out.
func TestReadScope(t *testing.T) {
	ctx := t.Context()
	root, outside := t.TempDir(), t.TempDir()
	d := newDriver(t, root)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put := func(rel, content string) {
		t.Helper()
		name := filepath.Join(root, filepath.FromSlash(rel))
		must(os.MkdirAll(filepath.Dir(name), 0o755))
		must(os.WriteFile(name, []byte(content), 0o644))
	}
	put("u/main/b.md", "béta "+strings.Repeat("ü", 20))
	put("u/main/a.md", "alpha")
	put("u/main/sub/c.md", "nested")
	put("u/main/"+tmpPrefix+"x", "temporary")
	put("u/main/bad name.md", "not addressable")
	must(os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "u/main/escape.md")))
	must(os.Symlink(filepath.Join(root, "u/main/a.md"), filepath.Join(root, "u/main/link.md")))
	must(os.Symlink(filepath.Join(root, "u/main"), filepath.Join(root, "u/alias")))

	got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "u/main/", Limit: 10, MaxChars: 8})
	must(err)
	want := []driver.ScopeFile{
		{Path: "u/main/a.md", Content: "alpha"},
		{Path: "u/main/b.md", Content: "béta üüü", Truncated: true},
		{Path: "u/main/link.md", Content: "alpha"},
	}
	if len(got) != len(want) {
		t.Fatalf("ReadScope = %+v, want %+v", got, want)
	}
	for i := range want {
		if !want[i].Truncated { // a whole file carries its version, as GetFile tells it
			f, err := d.GetFile(ctx, want[i].Path)
			must(err)
			want[i].Version = f.Version
		}
		if got[i] != want[i] {
			t.Fatalf("ReadScope[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "u/main/", Limit: 1, MaxChars: 100}); err != nil || len(got) != 1 || got[0].Path != "u/main/a.md" {
		t.Fatalf("limit 1: %+v, %v", got, err)
	}
	for _, scope := range []string{"u/alias/", "u/none/", "u/main/a.md/", ".agentmem/"} {
		if got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: scope, Limit: 10, MaxChars: 100}); err != nil || len(got) != 0 {
			t.Fatalf("scope %q: %+v, %v; want nothing", scope, got, err)
		}
	}
	put("top.md", "at the root")
	if got, err := d.ReadScope(ctx, driver.ScopeParams{Prefix: "", Limit: 10, MaxChars: 100}); err != nil || len(got) != 1 || got[0].Path != "top.md" {
		t.Fatalf("root scope: %+v, %v", got, err)
	}
	files, err := d.GetFiles(ctx, []string{"u/main/a.md", "u/none.md", "u/main/b.md"})
	must(err)
	if len(files) != 2 || files[0].Content != "alpha" || files[1].Path != "u/main/b.md" {
		t.Fatalf("GetFiles = %+v", files)
	}
}
