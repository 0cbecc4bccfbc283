package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

var receiptCases = []Case{
	{"receipt_write_replay", func(t *testing.T, e *Env) {
		s := e.Store
		o := op("op-write", "fp-1")
		m, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "one", Operation: o})
		if err != nil || m.Replayed || m.Existed {
			t.Fatalf("first = %+v, %v", m, err)
		}
		r, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "one", Operation: o})
		if err != nil || !r.Replayed || r.Version != m.Version || r.Existed {
			t.Fatalf("replay = %+v, %v", r, err)
		}
		g, err := s.GetOperation(ctx(t), *o)
		if err != nil || g == nil || *g != r {
			t.Fatalf("GetOperation = %+v, %v; want %+v", g, err, r)
		}
		eq(t, "op id", read(t, s, "r.md", 1).OperationID, "op-write")
	}},
	{"receipt_fingerprint_conflict", func(t *testing.T, e *Env) {
		s := e.Store
		if _, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "one", Operation: op("op", "fp-1")}); err != nil {
			t.Fatal(err)
		}
		_, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "two", Operation: op("op", "fp-2")})
		mustErr(t, err, store.ErrOperationConflict, "write with another fingerprint")
		_, err = s.Delete(ctx(t), store.DeleteRequest{Path: "r.md", Operation: op("op", "fp-2")})
		mustErr(t, err, store.ErrOperationConflict, "delete with another fingerprint")
		_, err = s.GetOperation(ctx(t), store.Operation{ID: "op", Fingerprint: "fp-2"})
		mustErr(t, err, store.ErrOperationConflict, "GetOperation with another fingerprint")
		eq(t, "content", read(t, s, "r.md", 10).Content, "one")
	}},
	{"receipt_checked_before_version", func(t *testing.T, e *Env) {
		s := e.Store
		o := op("op", "fp")
		m, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "one", Operation: o})
		if err != nil {
			t.Fatal(err)
		}
		write(t, s, "r.md", "changed since", m.Version)
		// The expected version is stale now, but the receipt answers first.
		r, err := s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "one", Operation: o})
		if err != nil || !r.Replayed || r.Version != m.Version {
			t.Fatalf("replay after a later change = %+v, %v", r, err)
		}
		_, err = s.Write(ctx(t), store.WriteRequest{Path: "r.md", Content: "x", Expected: "bogus", Operation: op("op", "other")})
		mustErr(t, err, store.ErrOperationConflict, "fingerprint before version")
		eq(t, "content", read(t, s, "r.md", 20).Content, "changed since")
	}},
	{"receipt_delete_missing_replay", func(t *testing.T, e *Env) {
		s := e.Store
		o := op("op-del", "fp")
		m, err := s.Delete(ctx(t), store.DeleteRequest{Path: "missing.md", Operation: o})
		if err != nil || m.Existed || m.Replayed {
			t.Fatalf("delete missing = %+v, %v", m, err)
		}
		r, err := s.Delete(ctx(t), store.DeleteRequest{Path: "missing.md", Operation: o})
		if err != nil || r.Existed || !r.Replayed || r.Version != "" {
			t.Fatalf("replay = %+v, %v", r, err)
		}
	}},
	{"receipt_delete_replay", func(t *testing.T, e *Env) {
		s := e.Store
		v := create(t, s, "d.md", "x")
		o := op("op-del", "fp")
		m, err := s.Delete(ctx(t), store.DeleteRequest{Path: "d.md", Expected: v, Operation: o})
		if err != nil || !m.Existed || m.Replayed {
			t.Fatalf("delete = %+v, %v", m, err)
		}
		create(t, s, "d.md", "recreated")
		r, err := s.Delete(ctx(t), store.DeleteRequest{Path: "d.md", Expected: v, Operation: o})
		if err != nil || !r.Existed || !r.Replayed {
			t.Fatalf("replay = %+v, %v", r, err)
		}
		eq(t, "recreated file untouched", read(t, s, "d.md", 20).Content, "recreated")
		eqSlice(t, "listing", list(t, s, "", 10), []string{"d.md"})
	}},
	{"get_operation_unknown", func(t *testing.T, e *Env) {
		g, err := e.Store.GetOperation(ctx(t), store.Operation{ID: "never", Fingerprint: "fp"})
		if err != nil || g != nil {
			t.Fatalf("GetOperation(unknown) = %+v, %v", g, err)
		}
	}},
	{"invalid_operation", func(t *testing.T, e *Env) {
		for _, o := range []*store.Operation{op("", "fp"), op("id", ""), op(strings.Repeat("x", 513), "fp"), op("a\x00b", "fp"), op("id", "\xff")} {
			_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "a.md", Content: "x", Operation: o})
			mustErr(t, err, store.ErrInvalidOperation, "write")
			_, err = e.Store.Delete(ctx(t), store.DeleteRequest{Path: "a.md", Operation: o})
			mustErr(t, err, store.ErrInvalidOperation, "delete")
		}
		if read(t, e.Store, "a.md", 1) != nil {
			t.Fatal("refused write landed")
		}
	}},
	{"failed_mutation_leaves_no_block", func(t *testing.T, e *Env) {
		s := e.Store
		v := create(t, s, "f.md", "base")
		v2 := write(t, s, "f.md", "moved on", v).Version
		o := op("op-retry", "fp")
		_, err := s.Write(ctx(t), store.WriteRequest{Path: "f.md", Content: "mine", Expected: v, Operation: o})
		mustErr(t, err, store.ErrConflict, "stale attempt")
		if g, err := s.GetOperation(ctx(t), *o); err != nil || g != nil {
			t.Fatalf("a conflict left a receipt: %+v, %v", g, err)
		}
		m, err := s.Write(ctx(t), store.WriteRequest{Path: "f.md", Content: "mine", Expected: v2, Operation: o})
		if err != nil || m.Replayed {
			t.Fatalf("retry with the same operation = %+v, %v", m, err)
		}
		_, err = s.Delete(ctx(t), store.DeleteRequest{Path: "f.md", Expected: v2, Operation: op("op-del", "fp")})
		mustErr(t, err, store.ErrConflict, "stale delete attempt")
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "f.md", Expected: m.Version, Operation: op("op-del", "fp")}); err != nil {
			t.Fatalf("delete retry: %v", err)
		}
	}},
	{"receipts_never_listed_or_searched", func(t *testing.T, e *Env) {
		s := e.Store
		for i, p := range []string{"t/main/a.md", "t/main/b.md"} {
			m, err := s.Write(ctx(t), store.WriteRequest{Path: p, Content: "needle", Operation: op("t/main/op-"+p, "needle")})
			if err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: p, Expected: m.Version, Operation: op("t/main/del", "needle")}); err != nil {
					t.Fatal(err)
				}
			}
		}
		eqSlice(t, "all paths", list(t, s, "", 100), []string{"t/main/a.md"})
		res, err := s.Search(ctx(t), search.Request{Prefix: "t/main/", Query: "needle op", Limit: 10, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
		if err != nil || len(res.Matches) != 1 || res.Scanned != 1 || res.Matches[0].Path != "t/main/a.md" {
			t.Fatalf("search = %+v, %v", res, err)
		}
	}},
	{"receipt_retention", func(t *testing.T, e *Env) {
		now := time.Now()
		clock := func() time.Time { return now }
		s := e.NewStore(t, &store.Options{ReceiptRetention: time.Hour, Now: clock}, nil)
		o := op("op-ttl", "fp")
		if _, err := s.Write(ctx(t), store.WriteRequest{Path: "a.md", Content: "x", Operation: o}); err != nil {
			t.Fatal(err)
		}
		r, err := e.Raw.GetReceipt(ctx(t), o.ID)
		if err != nil || r == nil || !r.Completed {
			t.Fatalf("receipt = %+v, %v", r, err)
		}
		if d := r.ExpiresAt.Sub(now); d < time.Hour-time.Second || d > time.Hour+time.Second {
			t.Fatalf("receipt expires in %v, want 1h", d)
		}
		if !s.Capabilities().Prune {
			return // expiry is the backend's TTL attribute, checked above
		}
		now = now.Add(2 * time.Hour)
		n, err := s.PruneExpired(ctx(t))
		if err != nil || n < 1 {
			t.Fatalf("prune = %d, %v", n, err)
		}
		if g, _ := s.GetOperation(ctx(t), *o); g != nil {
			t.Fatal("expired receipt still answers")
		}
		eq(t, "file kept", read(t, s, "a.md", 1).Content, "x")
	}},
	{"prune_only_expired", func(t *testing.T, e *Env) {
		// A prune removes exactly the receipts that expired, however they
		// are indexed or batched, and a second prune finds nothing.
		now := time.Now()
		s := e.NewStore(t, &store.Options{ReceiptRetention: time.Hour, Now: func() time.Time { return now }}, nil)
		if !s.Capabilities().Prune {
			return // expiry is the backend's TTL; it cannot be forced here
		}
		writeOps := func(prefix string, n int) []store.Operation {
			var ops []store.Operation
			for i := range n {
				o := op(fmt.Sprint(prefix, i), "fp")
				if _, err := s.Write(ctx(t), store.WriteRequest{Path: fmt.Sprintf("%s/%d.md", prefix, i), Content: "x", Operation: o}); err != nil {
					t.Fatal(err)
				}
				ops = append(ops, *o)
			}
			return ops
		}
		early := writeOps("early", 5)
		now = now.Add(30 * time.Minute)
		late := writeOps("late", 3)
		now = now.Add(31 * time.Minute) // early expired, late not yet
		if n, err := s.PruneExpired(ctx(t)); err != nil || n != len(early) {
			t.Fatalf("prune = %d, %v; want %d", n, err, len(early))
		}
		if n, err := s.PruneExpired(ctx(t)); err != nil || n != 0 {
			t.Fatalf("second prune = %d, %v; want 0", n, err)
		}
		for _, o := range early {
			if g, err := s.GetOperation(ctx(t), o); err != nil || g != nil {
				t.Fatalf("expired %s still answers: %+v, %v", o.ID, g, err)
			}
		}
		for _, o := range late {
			if g, err := s.GetOperation(ctx(t), o); err != nil || g == nil {
				t.Fatalf("unexpired %s pruned: %+v, %v", o.ID, g, err)
			}
		}
		now = now.Add(time.Hour)
		if n, err := s.PruneExpired(ctx(t)); err != nil || n != len(late) {
			t.Fatalf("last prune = %d, %v; want %d", n, err, len(late))
		}
		eq(t, "files kept", fmt.Sprint(len(list(t, s, "", 100))), "8")
	}},
	{"replay_storm", func(t *testing.T, e *Env) {
		s := e.Store
		v := create(t, s, "storm.md", "base")
		o := op("op-storm", "fp")
		const n = 8
		type res struct {
			m   store.Mutation
			err error
		}
		out := make(chan res, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			go func() {
				<-start
				m, err := s.Write(ctx(t), store.WriteRequest{Path: "storm.md", Content: "applied once", Expected: v, Operation: o})
				out <- res{m, err}
			}()
		}
		close(start)
		applied, version := 0, ""
		for i := 0; i < n; i++ {
			r := <-out
			if r.err != nil {
				t.Fatalf("storm writer: %v", r.err)
			}
			if !r.m.Replayed {
				applied++
			}
			if version == "" {
				version = r.m.Version
			}
			eq(t, "same version to all", r.m.Version, version)
		}
		eq(t, "applied", applied, 1)
		f := read(t, s, "storm.md", 100)
		eq(t, "content", f.Content, "applied once")
		eq(t, "version", f.Version, version)
	}},
	{"pending_receipt_blocks_nothing_else", func(t *testing.T, e *Env) {
		// A crashed attempt's pending receipt must not stop other
		// operations on the same path, and its replay must see the truth.
		v := create(t, e.Store, "p.md", "base")
		f := NewFaults(e.Driver)
		crashed := store.New(f, e.Options())
		mode := CrashAfter // the reservation lands, then the process dies
		if e.Store.Capabilities().AtomicMutation {
			mode = Crash // an atomic mutation cannot leave a pending receipt
		}
		f.Inject(1, mode)
		o := op("op-crash", "fp")
		if _, err := crashed.Write(ctx(t), store.WriteRequest{Path: "p.md", Content: "lost", Expected: v, Operation: o}); !errors.Is(err, ErrInjected) {
			t.Fatalf("crashed write: %v", err)
		}
		m := write(t, e.Store, "p.md", "other writer", v)
		if _, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: "p.md", Expected: m.Version, Operation: op("op-other", "fp")}); err != nil {
			t.Fatal(err)
		}
		e.expireLeases() // past the suite's pending timeout
		_, err := e.Store.Write(ctx(t), store.WriteRequest{Path: "p.md", Content: "lost", Expected: v, Operation: o})
		mustErr(t, err, store.ErrConflict, "replay of the crashed write")
		if g, err := e.Store.GetOperation(ctx(t), *o); err != nil || g != nil {
			t.Fatalf("GetOperation after settling = %+v, %v", g, err)
		}
		if read(t, e.Store, "p.md", 1) != nil {
			t.Fatal("the crashed write landed late")
		}
		eqSlice(t, "listing", list(t, e.Store, "", 10), nil)
	}},
	{"inflight_attempt_fenced", func(t *testing.T, e *Env) {
		// An attempt stalls inside its conditional write; meanwhile its
		// receipt is settled as crashed. When the stalled request finally
		// reaches the backend it must not land, or a replay would apply the
		// operation a second time.
		path := "i.md"
		v := create(t, e.Store, path, "seed\n")
		o := op("op-inflight", "fp")
		release, done := stallChange(t, e, store.WriteRequest{Path: path, Content: "seed\n" + opLine + "\n", Expected: v, Operation: o})
		e.expireLeases() // the stalled attempt's lease runs out
		other := e.NewStore(t, e.Options(), nil)
		g, err := other.GetOperation(ctx(t), *o)
		if err != nil || (g != nil && e.Mode == modePrimitives) {
			t.Fatalf("GetOperation while stalled = %+v, %v", g, err)
		}
		close(release)
		if err := <-done; err != nil && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stalled attempt: %v", err)
		}
		if _, err := AppendOnce(ctx(t), other, path, opLine, o, 16); err != nil {
			t.Fatalf("replay: %v", err)
		}
		content := read(t, other, path, 100).Content
		if n := strings.Count(content, opLine+"\n"); n != 1 {
			t.Fatalf("operation applied %d times: %q", n, content)
		}
	}},
	{"lagging_read_cannot_drop_live_attempt", func(t *testing.T, e *Env) {
		// A settlement reads a stale row (a backend whose reads lag, as
		// Cosmos DB's across sessions): it shows a version the stalled
		// attempt can no longer land on, though the attempt still can. The
		// settlement must not drop the attempt on that read alone.
		path := "lag.md"
		v0 := create(t, e.Store, path, "seed\n")
		old, err := e.Driver.GetFile(ctx(t), path)
		if err != nil {
			t.Fatal(err)
		}
		v1 := write(t, e.Store, path, "seed\nmore\n", v0).Version
		o := op("op-lag", "fp")
		release, done := stallChange(t, e, store.WriteRequest{Path: path, Content: "seed\nmore\n" + opLine + "\n", Expected: v1, Operation: o})
		e.expireLeases()
		other := e.NewStore(t, e.Options(), func(d driver.Driver) driver.Driver {
			return &laggingReads{Interceptor: NewInterceptor(d), stale: old}
		})
		if _, err := other.GetOperation(ctx(t), *o); err != nil {
			t.Fatalf("GetOperation while stalled: %v", err)
		}
		close(release)
		if err := <-done; err != nil && !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stalled attempt: %v", err)
		}
		if _, err := AppendOnce(ctx(t), e.Store, path, opLine, o, 16); err != nil {
			t.Fatalf("replay: %v", err)
		}
		content := read(t, e.Store, path, 100).Content
		if n := strings.Count(content, opLine+"\n"); n != 1 {
			t.Fatalf("operation applied %d times: %q", n, content)
		}
	}},
	{"contended_receipt_is_a_conflict", func(t *testing.T, e *Env) {
		// Concurrent attempts keep reserving and dropping the receipt: the
		// store must answer ErrConflict (re-read and retry), never leak the
		// driver's own precondition error.
		i := NewInterceptor(e.Driver)
		i.Before = func(call string) error {
			if call == "ReserveReceipt" {
				return fmt.Errorf("reserved by another attempt: %w", driver.ErrPrecondition)
			}
			return nil
		}
		s := store.New(shared(i), e.Options())
		_, err := s.Write(ctx(t), store.WriteRequest{Path: "c.md", Content: "x", Operation: op("contended", "fp")})
		if s.Capabilities().AtomicMutation {
			if err != nil {
				t.Fatalf("atomic write: %v", err)
			}
			return
		}
		mustErr(t, err, store.ErrConflict, "write whose receipt keeps changing")
		if read(t, e.Store, "c.md", 1) != nil {
			t.Fatal("the contended write landed")
		}
	}},
}

// laggingReads answers the first read of stale.Path with stale, as a
// replica that has not caught up would.
type laggingReads struct {
	*Interceptor
	stale *driver.File
	once  sync.Once
}

func (l *laggingReads) GetFile(ctx context.Context, path string) (*driver.File, error) {
	var stale *driver.File
	if path == l.stale.Path {
		l.once.Do(func() { stale = l.stale })
	}
	if stale != nil {
		return stale, nil
	}
	return l.Interceptor.GetFile(ctx, path)
}

// stallChange starts w on its own store and returns once the write's
// conditional change (ReplaceFile or Mutate) is about to reach the backend,
// held there until release is closed; the write's error arrives on done.
func stallChange(t *testing.T, e *Env, w store.WriteRequest) (release chan struct{}, done <-chan error) {
	i := NewInterceptor(e.Driver)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	i.Before = func(call string) error {
		if call == "ReplaceFile" || call == "Mutate" {
			once.Do(func() { close(entered); <-release })
		}
		return nil
	}
	slow := store.New(i, e.Options())
	out := make(chan error, 1)
	go func() {
		_, err := slow.Write(ctx(t), w)
		out <- err
	}()
	<-entered
	return release, out
}
