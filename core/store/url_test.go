package store_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// writeRead writes one file through s, reads it back and closes s.
func writeRead(t *testing.T, s *store.Store) {
	t.Helper()
	defer s.Close()
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(t.Context(), "u/a.md", 10); err != nil || f.Content != "hi" {
		t.Fatalf("read = %+v, %v", f, err)
	}
}

func TestOpenMem(t *testing.T) {
	for _, u := range []string{"mem://", "MEM://", "mem:", "mem:///"} {
		s, err := store.Open(t.Context(), u, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		if _, ok := s.Driver().(*memstore.Driver); !ok {
			t.Fatalf("Open(%q) driver %T", u, s.Driver())
		}
		writeRead(t, s)
	}
}

func TestOpenFileAbsoluteAndRelative(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "abs")
	s, err := store.Open(t.Context(), "file://"+filepath.ToSlash(abs), nil)
	if err != nil {
		t.Fatal(err)
	}
	writeRead(t, s)
	if _, err := os.Stat(filepath.Join(abs, "u", "a.md")); err != nil {
		t.Errorf("absolute file URL: %v", err)
	}

	t.Chdir(dir)
	for _, u := range []string{"file:rel", "file:./rel%20two"} {
		s, err := store.Open(t.Context(), u, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		writeRead(t, s)
	}
	for _, name := range []string{"rel", "rel two"} {
		if _, err := os.Stat(filepath.Join(dir, name, "u", "a.md")); err != nil {
			t.Errorf("relative file URL: %v", err)
		}
	}
}

func TestOpenDriverOwnedByCaller(t *testing.T) {
	d, err := store.OpenDriver(t.Context(), "file:"+filepath.ToSlash(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*filestore.Driver); !ok {
		t.Fatalf("driver %T", d)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenInvalidURL(t *testing.T) {
	for _, u := range []string{
		"",                    // empty
		"memory.db",           // no scheme
		"mem://host",          // mem takes no host
		"mem://?x=1",          // nor parameters
		"file:",               // no directory
		"file://host/dir",     // a host
		"file:dir?mode=0700",  // an unknown parameter
		"file:dir?%zz",        // a query that does not parse
		"postgres://a b@host", // does not parse
		"1bad://x",            // not a scheme
	} {
		_, err := store.Open(t.Context(), u, nil)
		if !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL", u, err)
		}
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	_, err := store.Open(t.Context(), "sqlite:memory.db", nil)
	if !errors.Is(err, store.ErrUnknownScheme) || !errors.Is(err, store.ErrInvalidURL) {
		t.Fatalf("err = %v, want ErrUnknownScheme and ErrInvalidURL", err)
	}
	for _, want := range []string{`"github.com/agentmem/agentmem/sqlite"`, "file", "mem"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	_, err = store.Open(t.Context(), "ftp://example.com/x", nil)
	if !errors.Is(err, store.ErrUnknownScheme) || !strings.Contains(err.Error(), "file, mem") {
		t.Errorf("err = %v, want ErrUnknownScheme listing the registered schemes", err)
	}
}

func TestOpenErrorsHideSecrets(t *testing.T) {
	for _, u := range []string{
		"postgres://kamal:s3cret@db.example.com/mem?password=s3cret",       // unknown scheme here
		"postgres://kamal:s3cret@[::1/mem",                                 // does not parse
		"postgres://kamal:s3cret@db.example.com:port/mem",                  // bad port
		"file://kamal:s3cret@host/dir",                                     // refused by the opener
		"file:dir?key=s3cret",                                              // unknown parameter
		"mem://kamal:s3cret@",                                              // refused by the opener
		"cosmosdb://kamal:s3cret@acct.documents.azure.com/db/c?key=s3cret", // unknown scheme here
	} {
		_, err := store.Open(t.Context(), u, nil)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", u)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) error repeats the secret: %v", u, err)
		}
	}
}

func TestOpenAppliesOptions(t *testing.T) {
	called := false
	now := func() time.Time { called = true; return time.Now() }
	s, err := store.Open(t.Context(), "mem://", &store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	writeRead(t, s)
	if !called {
		t.Error("the store did not use Options.Now")
	}
}

func TestOpenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := store.Open(ctx, "mem://", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRegister(t *testing.T) {
	open := func(ctx context.Context, _ *url.URL) (driver.Driver, error) { return memstore.New(ctx, nil) }
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("duplicate", func() { store.Register("MEM", open) })
	mustPanic("nil opener", func() { store.Register("test-nil", nil) })
	mustPanic("bad scheme", func() { store.Register("not a scheme", open) })
	mustPanic("empty scheme", func() { store.Register("", open) })

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			store.Register(fmt.Sprintf("test-concurrent-%d", i), open)
			_ = store.Schemes()
		})
	}
	wg.Wait()
	s, err := store.Open(t.Context(), "Test-Concurrent-3://anything", nil)
	if err != nil {
		t.Fatal(err)
	}
	writeRead(t, s)

	nilDriver := func(context.Context, *url.URL) (driver.Driver, error) { return nil, nil }
	store.Register("test-nil-driver", nilDriver)
	if _, err := store.Open(t.Context(), "test-nil-driver:", nil); err == nil {
		t.Error("an opener returning no driver was accepted")
	}
}

// TestOpenHistoryParam checks the store's own URL parameter: it turns
// history on whatever the backend, and a bad value says what to write.
func TestOpenHistoryParam(t *testing.T) {
	var got url.Values
	store.Register("hist", func(_ context.Context, u *url.URL) (driver.Driver, error) {
		got = u.Query()
		return histDriver{}, nil
	})
	for raw, want := range map[string]time.Duration{
		"hist://?history=on":     store.DefaultHistoryRetention,
		"hist://?history=48h":    48 * time.Hour,
		"hist://?history=7d&x=1": 7 * 24 * time.Hour,
		"hist://?x=1":            0,
	} {
		s, err := store.Open(t.Context(), raw, nil)
		if err != nil {
			t.Fatalf("Open(%q): %v", raw, err)
		}
		if got.Has(store.HistoryParam) {
			t.Errorf("Open(%q) passed %q to the backend", raw, store.HistoryParam)
		}
		_, err = s.Write(t.Context(), store.WriteRequest{Path: "a.md", Content: "x"})
		if on := want != 0; on != errors.Is(err, store.ErrHistoryUnsupported) {
			t.Errorf("Open(%q): a write over a driver without history = %v; history on = %v", raw, err, on)
		}
	}
	for _, raw := range []string{"hist://?history=", "hist://?history=-1h", "hist://?history=xd", "hist://?history=soon"} {
		if _, err := store.Open(t.Context(), raw, nil); !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL", raw, err)
		}
	}
}

// TestOpenHistoryParamKeepsQueryChecks checks that taking the history
// parameter off a URL never hides the rest of its query from the checks:
// a malformed parameter beside it, or history given twice, is refused as it
// is without history, not dropped silently.
func TestOpenHistoryParamKeepsQueryChecks(t *testing.T) {
	for _, raw := range []string{"mem://?history=on&table=%zz", "mem://?table=%zz&history=on", "mem://?history=on&history=2d"} {
		s, err := store.Open(t.Context(), raw, nil)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL", raw, err)
		}
	}
}

// histDriver is a driver without history whose writes succeed.
type histDriver struct{ driver.Driver }

func (histDriver) GetFile(context.Context, string) (*driver.File, error) { return nil, nil }
func (histDriver) CreateFile(context.Context, driver.File) error         { return nil }
func (histDriver) ListFiles(context.Context, driver.ListParams) ([]driver.Entry, error) {
	return nil, nil
}
func (histDriver) Close() error { return nil }

// TestCheckQueryDeterministic: of several unknown or repeated parameters,
// the error names the first in sorted order, on every call.
func TestCheckQueryDeterministic(t *testing.T) {
	u, err := url.Parse("mem://x?zeta=1&beta=2&alpha=3&alpha=4&gamma=5")
	if err != nil {
		t.Fatal(err)
	}
	for range 32 {
		err := driver.CheckQuery(u, "alpha")
		if !errors.Is(err, store.ErrInvalidURL) || !strings.Contains(err.Error(), `parameter "alpha" is given 2 times`) {
			t.Fatalf("CheckQuery = %v, want the repeated alpha named", err)
		}
	}
}

// TestRecencyParam checks the store URL's recency parameter: a half-life
// in days or as a duration becomes the store's default for searches that
// name none (two alike notes then come back newest first), the program's
// option wins, and a bad value is an ErrInvalidURL that says what to
// write.
func TestRecencyParam(t *testing.T) {
	ctx := t.Context()
	clock := time.Now()
	order := func(rawURL string, opts *store.Options) string {
		t.Helper()
		if opts == nil {
			opts = &store.Options{}
		}
		opts.Now = func() time.Time { return clock }
		s, err := store.Open(ctx, rawURL, opts)
		if err != nil {
			t.Fatalf("Open(%q): %v", rawURL, err)
		}
		defer s.Close()
		for i, p := range []string{"r/a-old.md", "r/b-new.md"} {
			clock = clock.Add(time.Duration(i) * 30 * 24 * time.Hour)
			if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "- The heron nests by the river.\n"}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := s.Search(ctx, search.Request{Prefix: "r/", Query: "heron river", Limit: 5, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.Matches {
			got = append(got, strings.TrimPrefix(m.Path, "r/"))
		}
		return strings.Join(got, ",")
	}
	if got := order("mem://", nil); got != "a-old.md,b-new.md" {
		t.Errorf("without recency: %s", got)
	}
	for _, u := range []string{"mem://?recency=7d", "mem://?recency=168h"} {
		if got := order(u, nil); got != "b-new.md,a-old.md" {
			t.Errorf("%s: %s, want the newer note first", u, got)
		}
	}
	if got := order("mem://?recency=7d", &store.Options{SearchRecencyHalfLife: -1}); got != "a-old.md,b-new.md" {
		t.Errorf("the program's option (here negative: off) must win over the URL; got %s", got)
	}
	for _, bad := range []string{"mem://?recency=soon", "mem://?recency=0d", "mem://?recency=-1h", "mem://?recency=7d&recency=8d"} {
		_, err := store.Open(ctx, bad, nil)
		if !errors.Is(err, store.ErrInvalidURL) || !strings.Contains(err.Error(), "recency") {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL naming recency", bad, err)
		}
	}
}
