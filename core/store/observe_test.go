package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

type obsKey struct{}

var discard = slog.New(slog.DiscardHandler)

// observed is a store.Observer that records every event as a line and
// marks the operation's context, so that driver calls can be checked to
// run under it.
type observed struct {
	mu     sync.Mutex
	events []string
	open   int // operations begun and not yet ended
}

func (r *observed) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *observed) ObserveOperation(ctx context.Context, op store.OperationInfo) (context.Context, func(store.OperationResult)) {
	r.mu.Lock()
	r.open++
	r.mu.Unlock()
	return context.WithValue(ctx, obsKey{}, op.Op), func(res store.OperationResult) {
		r.mu.Lock()
		r.open--
		r.mu.Unlock()
		if res.Failed() != (res.Err != nil) {
			panic("Failed disagrees with Err")
		}
		r.add(fmt.Sprintf("%s create=%v tracked=%v: %s %d", op.Op, op.Create, op.Tracked, res.Outcome, res.Count))
	}
}

func (r *observed) ObserveSettlement(ctx context.Context, s store.Settlement) {
	r.add(fmt.Sprintf("settled %s under %v", s, ctx.Value(obsKey{})))
}

func (r *observed) drain() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// underOp fails every driver call made outside an observed operation's
// context.
type underOp struct {
	driver.Driver
	mu      sync.Mutex
	calls   int
	outside []string
}

func (u *underOp) check(ctx context.Context, call string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if ctx.Value(obsKey{}) == nil {
		u.outside = append(u.outside, call)
	}
}

func (u *underOp) GetFile(ctx context.Context, path string) (*driver.File, error) {
	u.check(ctx, "GetFile")
	return u.Driver.GetFile(ctx, path)
}

func (u *underOp) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	u.check(ctx, "ListFiles")
	return u.Driver.ListFiles(ctx, p)
}

func (u *underOp) CreateFile(ctx context.Context, f driver.File) error {
	u.check(ctx, "CreateFile")
	return u.Driver.CreateFile(ctx, f)
}

func (u *underOp) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	u.check(ctx, "ReplaceFile")
	return u.Driver.ReplaceFile(ctx, f, expected)
}

func (u *underOp) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	u.check(ctx, "GetReceipt")
	return u.Driver.GetReceipt(ctx, id)
}

func (u *underOp) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	u.check(ctx, "ReserveReceipt")
	return u.Driver.ReserveReceipt(ctx, r)
}

func (u *underOp) DeleteFile(ctx context.Context, path, expected string) error {
	u.check(ctx, "DeleteFile")
	return u.Driver.DeleteFile(ctx, path, expected)
}

func (u *underOp) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	u.check(ctx, "CompleteReceipt")
	return u.Driver.CompleteReceipt(ctx, r)
}

func (u *underOp) DropReceipt(ctx context.Context, id, version string) error {
	u.check(ctx, "DropReceipt")
	return u.Driver.DropReceipt(ctx, id, version)
}

// TestObserverOperations checks what an Observer sees of each public
// operation, on the primitives (with the receipts' bookkeeping) and on the
// atomic path, and that every driver call runs under the operation's
// context.
func TestObserverOperations(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    func() driver.Driver
	}{
		{"primitives", func() driver.Driver { return &underOp{Driver: plain{mustMemDriver()}} }},
		{"atomic", func() driver.Driver { return mustMemDriver() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			rec := &observed{}
			d := tc.d()
			s := store.New(d, &store.Options{Observer: rec})
			op := &store.Operation{ID: "run-1/call-1", Fingerprint: "fp"}
			const p = "k/main/MEMORY.md"
			m, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "- lives in Hanoi", Operation: op})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: "- lives in Hanoi", Operation: op})
			_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: "lost", Expected: "v-stale"})
			_, _ = s.Write(ctx, store.WriteRequest{Path: p, Content: "other", Operation: &store.Operation{ID: op.ID, Fingerprint: "fp2"}})
			_, _ = s.Read(ctx, p, 10)
			_, _ = s.Read(ctx, "k/main/absent.md", 10)
			_, _ = s.Read(ctx, "../x", 10)
			_, _ = s.ListPaths(ctx, "k/", 10)
			_, _ = s.Search(ctx, search.Request{Prefix: "k/main/", Query: "hanoi", Limit: 5, MaxFiles: 10, MaxChars: 100, MaxFileChars: 100})
			// A recursive search lists the folders as part of itself: one
			// Search, no Walk of its own.
			_, _ = s.Search(ctx, search.Request{Prefix: "k/", Query: "hanoi", Limit: 5, MaxFiles: 10, MaxChars: 100, MaxFileChars: 100, Recursive: true})
			for range s.Walk(ctx, "k/", 0) {
			}
			for range s.Walk(ctx, "../", 0) {
			}
			_, _ = s.GetOperation(ctx, *op)
			_, _ = s.Delete(ctx, store.DeleteRequest{Path: p, Expected: m.Version})
			_, _ = s.Delete(ctx, store.DeleteRequest{Path: p, Operation: &store.Operation{ID: "d", Fingerprint: "fp"}})
			_, _ = s.PruneExpired(ctx)
			want := []string{
				"Write create=true tracked=true: ok 0",
				"Write create=true tracked=true: replayed 0",
				"Write create=false tracked=false: conflict 0",
				"Write create=true tracked=true: operation_conflict 0",
				"Read create=false tracked=false: ok 1",
				"Read create=false tracked=false: not_found 0",
				"Read create=false tracked=false: invalid_path 0",
				"ListPaths create=false tracked=false: ok 1",
				"Search create=false tracked=false: ok 1",
				"Search create=false tracked=false: ok 1",
				"Walk create=false tracked=false: ok 1",
				"Walk create=false tracked=false: invalid_path 0",
				"GetOperation create=false tracked=false: replayed 1",
				"Delete create=false tracked=false: ok 0",
				"Delete create=false tracked=true: ok 0",
				"PruneExpired create=false tracked=false: ok 0",
			}
			// The term index's background work (Index) runs beside
			// them, observed as an operation of its own.
			if err := s.WaitIndexed(ctx); err != nil {
				t.Fatal(err)
			}
			got := slices.DeleteFunc(rec.drain(), func(e string) bool { return strings.HasPrefix(e, "Index ") })
			if !slices.Equal(got, want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			rec.mu.Lock()
			if rec.open != 0 {
				t.Errorf("%d operations never ended", rec.open)
			}
			rec.mu.Unlock()
			if u, ok := d.(*underOp); ok {
				u.mu.Lock()
				if len(u.outside) > 0 || u.calls < 20 {
					t.Errorf("%d driver calls, these outside an operation's context: %v", u.calls, u.outside)
				}
				u.mu.Unlock()
			}
		})
	}
}

// TestObserverWalkStopped checks that a walk the caller stops early ends
// its operation with the paths it yielded.
func TestObserverWalkStopped(t *testing.T) {
	ctx := t.Context()
	rec := &observed{}
	s := store.New(newMemDriver(t), &store.Options{Observer: rec})
	for _, p := range []string{"k/a.md", "k/b.md", "k/c.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	rec.drain()
	for range s.Walk(ctx, "k/", 1) {
		break
	}
	if got, want := rec.drain(), []string{"Walk create=false tracked=false: ok 1"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// nilEnd returns a nil context and a nil end function: the store must go
// on as without an observer.
type nilEnd struct{ settlements int }

func (nilEnd) ObserveOperation(context.Context, store.OperationInfo) (context.Context, func(store.OperationResult)) {
	return nil, nil
}
func (n *nilEnd) ObserveSettlement(context.Context, store.Settlement) { n.settlements++ }

// TestObserverNilResults checks that an observer returning a nil context
// and a nil end function breaks nothing.
func TestObserverNilResults(t *testing.T) {
	s := store.New(newMemDriver(t), &store.Options{Observer: &nilEnd{}})
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "k/a.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(t.Context(), "k/a.md", 10); err != nil {
		t.Fatal(err)
	}
}

// pendingReceipt reserves, on d, a pending receipt of a write of path by
// operation id, reserved an hour ago (so that a replay settles it at once),
// that would write version mine over expected.
func pendingReceipt(t *testing.T, d driver.Driver, path, id, expected, mine string) {
	t.Helper()
	now := time.Now()
	r := driver.Receipt{ID: id, Fingerprint: "fp", Kind: driver.KindWrite, Path: path, Expected: expected,
		Version: mine, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour)}
	if err := d.ReserveReceipt(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// TestObserverSettlements checks that each way of settling a pending
// receipt is reported once, under the context of the operation that
// settled it: a replay that finds the attempt landed (completed) or not
// (rolled back), a write over a row whose attempt was never completed
// (completed), and a settlement that gives up.
func TestObserverSettlements(t *testing.T) {
	const p, id = "k/main/MEMORY.md", "run-1/call-1"
	const mine = "v-mine~" + id // the version names its operation, as on the primitive path
	for _, tc := range []struct {
		name string
		// landed writes the pending attempt's row too.
		landed bool
		run    func(ctx context.Context, s *store.Store) error
		wrap   func(driver.Driver) driver.Driver
		want   []string
	}{
		{"replay landed", true, func(ctx context.Context, s *store.Store) error {
			m, err := s.GetOperation(ctx, store.Operation{ID: id, Fingerprint: "fp"})
			if err == nil && m == nil {
				err = errors.New("GetOperation found nothing")
			}
			return err
		}, nil, []string{"settled completed under GetOperation", "GetOperation create=false tracked=false: replayed 1"}},
		{"replay not landed", false, func(ctx context.Context, s *store.Store) error {
			m, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x", Expected: "v-old", Operation: &store.Operation{ID: id, Fingerprint: "fp"}})
			if err == nil && m.Replayed {
				err = errors.New("a dropped attempt was replayed")
			}
			return err
		}, nil, []string{"settled rolled_back under Write", "Write create=false tracked=true: ok 0"}},
		{"overwrite landed", true, func(ctx context.Context, s *store.Store) error {
			_, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "y", Expected: mine})
			return err
		}, nil, []string{"settled completed under Write", "Write create=false tracked=false: ok 0"}},
		{"gave up", false, func(ctx context.Context, s *store.Store) error {
			if _, err := s.GetOperation(ctx, store.Operation{ID: id, Fingerprint: "fp"}); !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("GetOperation = %v, want ErrConflict", err)
			}
			return nil
		}, func(d driver.Driver) driver.Driver { return &faulty{Driver: d, replacePrecondition: true} },
			[]string{"settled gave_up under GetOperation", "GetOperation create=false tracked=false: conflict 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			inner := newMemDriver(t)
			version := "v-old"
			if tc.landed {
				version = mine
			}
			if err := inner.CreateFile(ctx, driver.File{Path: p, Content: "c", Version: "v-old"}); err != nil {
				t.Fatal(err)
			}
			if tc.landed {
				if err := inner.ReplaceFile(ctx, driver.File{Path: p, Content: "d", Version: version, OperationID: id}, "v-old"); err != nil {
					t.Fatal(err)
				}
			}
			pendingReceipt(t, inner, p, id, "v-old", mine)
			var d driver.Driver = plain{inner}
			if tc.wrap != nil {
				d = tc.wrap(inner)
			}
			rec := &observed{}
			s := store.New(d, &store.Options{Observer: rec, Logger: discard})
			if err := tc.run(ctx, s); err != nil {
				t.Fatal(err)
			}
			if got := rec.drain(); !slices.Equal(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}
