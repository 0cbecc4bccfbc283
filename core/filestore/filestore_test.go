package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

func open(t *testing.T, dir string) *store.Store {
	t.Helper()
	return openWith(t, dir, nil)
}

// openWith returns a store configured by opts over a driver on dir.
func openWith(t *testing.T, dir string, opts *store.Options) *store.Store {
	t.Helper()
	d, err := New(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store.New(d, opts)
}

func TestPlainMarkdownOnDisk(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := t.Context()
	content := "- prefers uv\n- 日本語 ✓\n"
	if _, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: content, Operation: &store.Operation{ID: "op", Fingerprint: "fp"}}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "kamal", "main", "MEMORY.md"))
	if err != nil || string(got) != content {
		t.Fatalf("on disk: %q, %v", got, err)
	}
	paths, err := s.ListPaths(ctx, "", 100)
	if err != nil || len(paths) != 1 || paths[0] != "kamal/main/MEMORY.md" {
		t.Fatalf("listing = %v, %v (sidecar or temp files listed?)", paths, err)
	}
	for _, p := range []string{".agentmem/lock", ".agentmem", ".agentmem-tmp-x/a.md"} {
		if _, err := s.Read(ctx, p, 10); !errors.Is(err, store.ErrReservedPath) {
			t.Errorf("read %q: %v, want ErrReservedPath", p, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "kamal", "main"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Errorf("staged file left behind: %s", e.Name())
		}
	}
}

func TestExternalEdit(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := t.Context()
	m, err := s.Write(ctx, store.WriteRequest{Path: "n/main.md", Content: "original"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "n", "main.md")
	if err := os.WriteFile(file, []byte("edited by a person"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := s.Read(ctx, "n/main.md", 100)
	if err != nil || f.Content != "edited by a person" || f.Version == m.Version {
		t.Fatalf("read after external edit = %+v, %v", f, err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "n/main.md", Content: "x", Expected: m.Version}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale CAS after external edit: %v", err)
	}
	// Restoring the exact bytes restores the version.
	if err := os.WriteFile(file, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "n/main.md", Content: "next", Expected: m.Version}); err != nil {
		t.Fatalf("CAS after restoring the bytes: %v", err)
	}
	// A file a person created is a file too.
	if err := os.WriteFile(filepath.Join(dir, "n", "new.md"), []byte("hand made"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = s.Read(ctx, "n/new.md", 100)
	if err != nil || f.Content != "hand made" {
		t.Fatalf("hand-made file: %+v, %v", f, err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "n/new.md", Content: "x"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create over a hand-made file: %v", err)
	}
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: "n/new.md", Expected: f.Version}); err != nil {
		t.Fatalf("delete of a hand-made file: %v", err)
	}
	// A file whose name is not a memory path is not listed.
	if err := os.WriteFile(filepath.Join(dir, "n", "has space.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.ListPaths(ctx, "n/", 10); len(p) != 1 || p[0] != "n/main.md" {
		t.Fatalf("listing = %v", p)
	}
}

func TestInterruptedReplaceReadsAsNotLanded(t *testing.T) {
	dir := t.TempDir()
	d, err := New(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	old := driver.File{Path: "a/b.md", Content: "old", Version: "v1"}
	if err := d.CreateFile(ctx, old); err != nil {
		t.Fatal(err)
	}
	// The record of a replace lands, then the process dies before the
	// content is renamed into place.
	rec := record{Version: "v2", Hash: hashOf([]byte("new")), Prev: &record{Version: "v1", Hash: hashOf([]byte("old"))}}
	if err := writeJSON(d.recordPath("a/b.md"), rec); err != nil {
		t.Fatal(err)
	}
	f, err := d.GetFile(ctx, "a/b.md")
	if err != nil || f.Version != "v1" || f.Content != "old" {
		t.Fatalf("after an interrupted replace: %+v, %v", f, err)
	}
	// A create whose content never landed reads as absent.
	if err := writeJSON(d.recordPath("a/c.md"), record{Version: "v9", Hash: hashOf([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if f, err := d.GetFile(ctx, "a/c.md"); err != nil || f != nil {
		t.Fatalf("after an interrupted create: %+v, %v", f, err)
	}
}

func TestSymlinkConfinement(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	s := open(t, dir)
	ctx := t.Context()
	// A tenant directory that is a symlink to outside.
	if err := os.Symlink(outside, filepath.Join(dir, "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "evil/main/MEMORY.md", Content: "x"}); !errors.Is(err, store.ErrPathEscape) {
		t.Fatalf("write through a symlinked dir: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was created outside: %v", entries)
	}
	if p, err := s.ListPaths(ctx, "evil/", 10); err != nil || len(p) != 0 {
		t.Fatalf("listing a symlinked prefix = %v, %v", p, err)
	}
	// A MEMORY.md that is a symlink to a file outside.
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "t", "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "t", "main", "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, "t/main/MEMORY.md", 10); !errors.Is(err, store.ErrPathEscape) {
		t.Fatalf("read of a symlink to outside: %v", err)
	}
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: "t/main/MEMORY.md", Expected: "anything"}); !errors.Is(err, store.ErrPathEscape) {
		t.Fatalf("delete of a symlink to outside: %v", err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "t/main/topic.md", Content: "secret topic"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, search.Request{Prefix: "t/main/", Query: "secret", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Path != "t/main/topic.md" || res.Scanned != 1 {
		t.Fatalf("search with an escaping file = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Fatalf("outside file changed: %q", b)
	}
	// A symlinked sub-directory pointing at another tenant inside the store
	// is never followed by listing.
	if _, err := s.Write(ctx, store.WriteRequest{Path: "other/main/private.md", Content: "private"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, "t", "alias")); err != nil {
		t.Fatal(err)
	}
	p, err := s.ListPaths(ctx, "t/", 100)
	if err != nil || strings.Contains(strings.Join(p, " "), "private") {
		t.Fatalf("listing followed a symlinked directory: %v, %v", p, err)
	}
}

// TestSeveralProcesses runs appenders in child processes (this test binary
// re-executed) and in this one, all on one directory.
func TestSeveralProcesses(t *testing.T) {
	if dir := os.Getenv("FILESTORE_CHILD_DIR"); dir != "" {
		appendLines(t, dir, os.Getenv("FILESTORE_CHILD_ID"), 15)
		return
	}
	if !multiProcess {
		t.Skip("no advisory file locks on this platform: one process per directory (documented)")
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSeveralProcesses$")
			cmd.Env = append(os.Environ(), "FILESTORE_CHILD_DIR="+dir, "FILESTORE_CHILD_ID=p"+strconv.Itoa(i))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child %d: %v\n%s", i, err, out)
			}
		}()
	}
	appendLines(t, dir, "parent", 15)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := open(t, dir).Read(t.Context(), "shared/MEMORY.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(f.Content), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Fatalf("line %q twice", l)
		}
		seen[l] = true
	}
	if len(lines) != 60 {
		t.Fatalf("%d lines, want 60", len(lines))
	}
}

func appendLines(t *testing.T, dir, id string, n int) {
	s := open(t, dir)
	ctx := t.Context()
	for j := 0; j < n; j++ {
		line := fmt.Sprintf("%s-%d", id, j)
		op := &store.Operation{ID: line, Fingerprint: "fp"}
		for attempt := 0; ; attempt++ {
			if attempt > 10000 {
				t.Fatal("gave up")
			}
			expected, base := "", ""
			if f, err := s.Read(ctx, "shared/MEMORY.md", 1<<20); err == nil {
				expected, base = f.Version, f.Content
			} else if !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			_, err := s.Write(ctx, store.WriteRequest{Path: "shared/MEMORY.md", Content: base + line + "\n", Expected: expected, Operation: op})
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrConflict) {
				t.Fatal(err)
			}
		}
	}
}

// TestNilArguments: a nil ctx and an empty dir are errors wrapping
// store.ErrNilArgument that say what to pass, never a panic, and create
// nothing in the working directory.
func TestNilArguments(t *testing.T) {
	t.Chdir(t.TempDir())
	var nilCtx context.Context
	for name, call := range map[string]func() (*Driver, error){
		"nil ctx":   func() (*Driver, error) { return New(nilCtx, "notes", nil) },
		"empty dir": func() (*Driver, error) { return New(t.Context(), "", nil) },
	} {
		d, err := call()
		if !errors.Is(err, store.ErrNilArgument) || d != nil || !strings.HasPrefix(err.Error(), "filestore: pass ") {
			t.Errorf("%s: New = %v, %v; want a \"filestore: pass ...\" error wrapping store.ErrNilArgument", name, d, err)
		}
	}
	for _, name := range []string{SidecarDir, "notes"} {
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s created in the working directory: %v", name, err)
		}
	}
}

// TestNoCreate: with Options.NoCreate a missing directory is an error
// wrapping store.ErrStoreNotFound and nothing is created; an existing
// directory opens (its sidecar made when missing) and keeps what it holds.
func TestNoCreate(t *testing.T) {
	ctx := t.Context()
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := New(ctx, missing, &Options{NoCreate: true}); !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("New(missing, NoCreate) err = %v, want store.ErrStoreNotFound", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("NoCreate created %s: %v", missing, err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "kamal", "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kamal", "main", "MEMORY.md"), []byte("- by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(ctx, dir, &Options{NoCreate: true})
	if err != nil {
		t.Fatalf("New(existing, NoCreate): %v", err)
	}
	f, err := store.New(d, nil).Read(ctx, "kamal/main/MEMORY.md", 100)
	if err != nil || f.Content != "- by hand\n" {
		t.Fatalf("Read = %+v, %v", f, err)
	}
	// Without NoCreate the missing directory is made.
	if _, err := New(ctx, missing, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(missing); err != nil || !st.IsDir() {
		t.Fatalf("New(missing) made no directory: %v", err)
	}
}

// TestBelowAFile: a path below a file names nothing. Listing under it is
// empty and a tombstone there (the primitive path's create puts one first)
// writes no file, rather than failing with the system's ENOTDIR, which a
// create racing a create of the folder used to see.
func TestBelowAFile(t *testing.T) {
	ctx := t.Context()
	d, err := New(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateFile(ctx, driver.File{Path: "p/x.md", Content: "a file", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"p/x.md/", "p/x.md/deep/"} {
		if es, err := d.ListFiles(ctx, driver.ListParams{Prefix: prefix, Limit: 10}); err != nil || len(es) != 0 {
			t.Fatalf("ListFiles(%q) = %v, %v; want nothing", prefix, es, err)
		}
	}
	if err := d.CreateFile(ctx, driver.File{Path: "p/x.md/y.md", Version: "t1", Tombstone: true}); err != nil {
		t.Fatalf("tombstone below a file: %v", err)
	}
	if f, err := d.GetFile(ctx, "p/x.md"); err != nil || f == nil || f.Content != "a file" {
		t.Fatalf("the file = %+v, %v", f, err)
	}
}

// TestListedIsListFiles: the exported name rules (IsTemporaryName,
// Listed) are the ones ListFiles applies to files placed by hand, so a
// caller that warns about unlisted files (agentmem ls) agrees with it.
func TestListedIsListFiles(t *testing.T) {
	root := t.TempDir()
	d, err := New(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names := []string{"u/main/a.md", "u/main/café.md", "u/main/my notes.md", "u/main/" + tmpPrefix + "1-a.md",
		"u/main/.hidden.md", "u/main/" + store.ReservedSegmentPrefix + "x.md", "u/main/z.md"}
	var want []string
	for _, rel := range names {
		name := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if Listed(rel) {
			want = append(want, rel)
		}
	}
	entries, err := d.ListFiles(t.Context(), driver.ListParams{Prefix: "u/", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Path)
	}
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) != 3 {
		t.Errorf("ListFiles lists %q; Listed says %q (want a.md, .hidden.md, z.md)", got, want)
	}
	if !IsTemporaryName(tmpPrefix+"1-a.md") || IsTemporaryName("a.md") || IsTemporaryName(SidecarDir) {
		t.Error("IsTemporaryName misjudges a name")
	}
}
