package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// records is a slog.Handler that keeps every record it is given.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// lines renders each record as "LEVEL message k=v k=v".
func (h *records) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		out = append(out, b.String())
	}
	return out
}

var errBackend = errors.New("backend unavailable for tenant-secret/main/x.md")

// faulty runs on the nine primitives (the embedded interface hides the
// optional ones) and fails the calls it is told to.
type faulty struct {
	driver.Driver
	complete, drop, del, replacePrecondition bool
}

func (f *faulty) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	if f.complete {
		return errBackend
	}
	return f.Driver.CompleteReceipt(ctx, r)
}

func (f *faulty) DropReceipt(ctx context.Context, id, version string) error {
	if f.drop {
		return errBackend
	}
	return f.Driver.DropReceipt(ctx, id, version)
}

func (f *faulty) DeleteFile(ctx context.Context, path, expected string) error {
	if f.del {
		return errBackend
	}
	return f.Driver.DeleteFile(ctx, path, expected)
}

func (f *faulty) ReplaceFile(ctx context.Context, file driver.File, expected string) error {
	if f.replacePrecondition {
		return fmt.Errorf("row moved: %w", driver.ErrPrecondition)
	}
	return f.Driver.ReplaceFile(ctx, file, expected)
}

const (
	logPath = "tenant-secret/main/MEMORY.md"
	logOpID = "user-42/run-1/call-1"
	content = "the secret content"
)

// checkClean fails when a log line holds content, a path, an operation id
// or the backend's error text.
func checkClean(t *testing.T, lines []string) {
	t.Helper()
	for _, l := range lines {
		for _, secret := range []string{content, "tenant-secret", "user-42", "backend unavailable"} {
			if strings.Contains(l, secret) {
				t.Errorf("log line %q holds %q", l, secret)
			}
		}
	}
}

// TestLogSwallowedFailures checks that each failure the store swallows is
// logged once at Warn with its kind and an operation hash, and nothing that
// names a tenant, unless LogDetails is set.
func TestLogSwallowedFailures(t *testing.T) {
	op := &store.Operation{ID: logOpID, Fingerprint: "fp"}
	for _, tc := range []struct {
		name string
		f    faulty
		run  func(ctx context.Context, s *store.Store, v string) error
		want string
	}{
		{"complete", faulty{complete: true}, func(ctx context.Context, s *store.Store, v string) error {
			_, err := s.Write(ctx, store.WriteRequest{Path: logPath, Content: content + "!", Expected: v, Operation: op})
			return err
		}, "WARN agentmem: completing a receipt failed"},
		{"tombstone", faulty{del: true}, func(ctx context.Context, s *store.Store, v string) error {
			_, err := s.Delete(ctx, store.DeleteRequest{Path: logPath, Expected: v, Operation: op})
			return err
		}, "WARN agentmem: removing a delete's tombstone failed"},
		{"drop", faulty{drop: true}, func(ctx context.Context, s *store.Store, v string) error {
			_, err := s.Write(ctx, store.WriteRequest{Path: logPath, Content: content, Expected: "v-stale", Operation: op})
			if !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("write with a stale version: %v, want ErrConflict", err)
			}
			return nil
		}, "WARN agentmem: dropping a receipt failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, details := range []bool{false, true} {
				ctx := t.Context()
				h := &records{}
				f := tc.f
				f.Driver = newMemDriver(t)
				s := store.New(&f, &store.Options{Logger: slog.New(h), LogDetails: details})
				m, err := store.New(f.Driver, nil).Write(ctx, store.WriteRequest{Path: logPath, Content: content})
				if err != nil {
					t.Fatal(err)
				}
				if err := tc.run(ctx, s, m.Version); err != nil {
					t.Fatal(err)
				}
				lines := h.lines()
				if len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) ||
					!strings.Contains(lines[0], "error_kind=*errors.errorString") || !strings.Contains(lines[0], "operation_hash=") {
					t.Fatalf("details %v: log = %q, want one line %q… with error_kind and operation_hash", details, lines, tc.want)
				}
				if !details {
					checkClean(t, lines)
				} else if !strings.Contains(lines[0], "path="+logPath) || !strings.Contains(lines[0], "operation="+logOpID) {
					t.Errorf("with LogDetails: %q, want the path and the operation id", lines[0])
				}
			}
		})
	}
}

// TestLogSettlementGaveUp checks that a settlement that gives up on a path
// that keeps changing is logged.
func TestLogSettlementGaveUp(t *testing.T) {
	ctx := t.Context()
	h := &records{}
	inner := newMemDriver(t)
	now := time.Now()
	if err := inner.CreateFile(ctx, driver.File{Path: logPath, Content: content, Version: "v-other"}); err != nil {
		t.Fatal(err)
	}
	r := driver.Receipt{ID: logOpID, Fingerprint: "fp", Kind: driver.KindWrite, Path: logPath, Expected: "v-other",
		Version: "v-mine", CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour)}
	if err := inner.ReserveReceipt(ctx, r); err != nil {
		t.Fatal(err)
	}
	s := store.New(&faulty{Driver: inner, replacePrecondition: true}, &store.Options{Logger: slog.New(h)})
	if _, err := s.GetOperation(ctx, store.Operation{ID: logOpID, Fingerprint: "fp"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("GetOperation = %v, want ErrConflict", err)
	}
	lines := h.lines()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "WARN agentmem: settling a pending receipt gave up") || !strings.Contains(lines[0], "error_kind=conflict") {
		t.Fatalf("log = %q, want one settlement line with error_kind=conflict", lines)
	}
	checkClean(t, lines)
}

// TestLogDefault checks that without Options.Logger the records go to
// slog.Default, and that a store that swallows nothing logs nothing.
func TestLogDefault(t *testing.T) {
	h := &records{}
	prev := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx := t.Context()
	for _, d := range []driver.Driver{newMemDriver(t), plain{newMemDriver(t)}} {
		s := store.New(d, nil)
		op := &store.Operation{ID: logOpID, Fingerprint: "fp"}
		m, err := s.Write(ctx, store.WriteRequest{Path: logPath, Content: content, Operation: op})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Write(ctx, store.WriteRequest{Path: logPath, Content: content, Expected: "v-stale"})
		if _, err := s.Delete(ctx, store.DeleteRequest{Path: logPath, Expected: m.Version, Operation: &store.Operation{ID: "d", Fingerprint: "fp"}}); err != nil {
			t.Fatal(err)
		}
	}
	if lines := h.lines(); len(lines) != 0 {
		t.Fatalf("log = %q, want nothing", lines)
	}
	f := &faulty{Driver: newMemDriver(t), complete: true}
	if _, err := store.New(f, nil).Write(ctx, store.WriteRequest{Path: logPath, Content: content, Operation: &store.Operation{ID: logOpID, Fingerprint: "fp"}}); err != nil {
		t.Fatal(err)
	}
	if lines := h.lines(); len(lines) != 1 {
		t.Fatalf("log = %q, want one line through slog.Default", lines)
	}
}

// TestErrorKind checks the names of error kinds.
func TestErrorKind(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                    "",
		store.ErrNotFound:                      "not_found",
		fmt.Errorf("x: %w", store.ErrConflict): "conflict",
		driver.ErrPrecondition:                 "precondition_failed",
		context.Canceled:                       "canceled",
		&strconvErr{}:                          "*store_test.strconvErr",
	} {
		if got := store.ErrorKind(err); got != want {
			t.Errorf("ErrorKind(%v) = %q, want %q", err, got, want)
		}
	}
}

type strconvErr struct{}

func (*strconvErr) Error() string { return "x" }
