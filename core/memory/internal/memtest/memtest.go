// Package memtest holds the test helpers that the notebook's tests
// (package memory) and the pruned-history pipeline's (package pruned)
// share: a fresh in-memory driver, a wrapping driver that counts calls and
// injects conflicts or failures, and reading and writing a file in one
// line.
package memtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
)

// NewDriver returns a new in-memory driver, failing tb if New fails.
func NewDriver(tb testing.TB) *memstore.Driver {
	tb.Helper()
	d, err := memstore.New(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// MustDriver returns a new in-memory driver where no testing.TB is at
// hand (a func literal); it panics if New fails.
func MustDriver() *memstore.Driver {
	d, err := memstore.New(context.Background(), nil)
	if err != nil {
		panic(err)
	}
	return d
}

// Driver wraps a driver's nine primitives (optional interfaces hidden) to
// count calls, inject conflicts or failures, and rewrite listings. Set its
// fields before the calls they change.
type Driver struct {
	driver.Driver
	mu sync.Mutex
	// Conflicts is how many of the next conditional writes to refuse with
	// driver.ErrPrecondition.
	Conflicts int
	// FailRead is returned by GetFile and ListFiles.
	FailRead error
	// Escape makes GetFile return driver.ErrPathEscape.
	Escape bool
	// Gets counts GetFile calls.
	Gets int
	// Lists records the limit of each ListFiles call.
	Lists []int
	// ExtraList is put before every listing's entries.
	ExtraList []string
}

// NewCounting returns a Driver over a fresh in-memory driver.
func NewCounting() *Driver { return &Driver{Driver: MustDriver()} }

func (d *Driver) take() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.Conflicts > 0 {
		d.Conflicts--
		return true
	}
	return false
}

// GetFile counts the read, then fails as set or reads.
func (d *Driver) GetFile(ctx context.Context, path string) (*driver.File, error) {
	d.mu.Lock()
	d.Gets++
	fail, esc := d.FailRead, d.Escape
	d.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case esc:
		return nil, driver.ErrPathEscape
	}
	return d.Driver.GetFile(ctx, path)
}

// ListFiles records the limit, then fails as set or lists, ExtraList
// first.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	d.mu.Lock()
	d.Lists = append(d.Lists, p.Limit)
	fail, extra := d.FailRead, d.ExtraList
	d.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	es, err := d.Driver.ListFiles(ctx, p)
	for _, x := range extra {
		es = append([]driver.Entry{{Path: x}}, es...)
	}
	return es, err
}

// CreateFile refuses while Conflicts lasts, else creates.
func (d *Driver) CreateFile(ctx context.Context, f driver.File) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.CreateFile(ctx, f)
}

// ReplaceFile refuses while Conflicts lasts, else replaces.
func (d *Driver) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.ReplaceFile(ctx, f, expected)
}

// DeleteFile refuses while Conflicts lasts, else deletes.
func (d *Driver) DeleteFile(ctx context.Context, path, expected string) error {
	if d.take() {
		return driver.ErrPrecondition
	}
	return d.Driver.DeleteFile(ctx, path, expected)
}

// Counts returns the GetFile and ListFiles calls so far.
func (d *Driver) Counts() (gets, lists int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.Gets, len(d.Lists)
}

// Content returns the content of the file at path, or "<absent>".
func Content(t testing.TB, s *store.Store, path string) string {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1<<20)
	if errors.Is(err, store.ErrNotFound) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return f.Content
}

// Put writes text at path over whatever is there.
func Put(t testing.TB, s *store.Store, path, text string) {
	t.Helper()
	expected := ""
	if f, err := s.Read(t.Context(), path, 1); err == nil {
		expected = f.Version
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: path, Content: text, Expected: expected}); err != nil {
		t.Fatal(err)
	}
}

// Name forwards the inner driver's backend name, as every wrapper does.
func (d *Driver) Name() string { return driver.Name(d.Driver) }

// SetFailRead sets FailRead while calls may be running.
func (d *Driver) SetFailRead(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.FailRead = err
}

// ListLimits returns a copy of Lists.
func (d *Driver) ListLimits() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.Lists)
}
