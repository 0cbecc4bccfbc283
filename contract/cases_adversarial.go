package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

var adversarialCases = []Case{
	{"adversarial_fenced_create_stays_fenced", func(t *testing.T, e *Env) {
		// A create finds a tombstone and stalls while replacing it. Its
		// lease runs out; a reader settles the operation as never landed,
		// which fences the tombstone. When the stalled attempt resumes it
		// must not land over the fence, or a replay applies it again.
		path := "fc.md"
		v := create(t, e.Store, path, "seed\n")
		keep := e.NewStore(t, e.Options(), advHooks(func(call string) error {
			if call == "DeleteFile" {
				return ErrInjected // the delete's tombstone stays (primitive path)
			}
			return nil
		}, nil))
		if _, err := keep.Delete(ctx(t), store.DeleteRequest{Path: path, Expected: v, Operation: op("fc-del", "fp")}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		o := op("fc-op", "fp")
		g, done := advStalledCreate(t, e, path, o)
		other := e.NewStore(t, e.Options(), nil)
		if got, err := other.GetOperation(ctx(t), *o); err != nil || got != nil {
			t.Fatalf("GetOperation while stalled = %+v, %v", got, err)
		}
		g.release()
		r := <-done
		if r.err != nil && !errors.Is(r.err, store.ErrConflict) {
			t.Fatalf("stalled attempt: %v", r.err)
		}
		m, err := AppendOnce(ctx(t), other, path, opLine, o, 16)
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		if r.err == nil && !m.Replayed {
			t.Fatalf("both the stalled attempt (%+v) and the replay (%+v) applied", r.m, m)
		}
		if n := strings.Count(read(t, other, path, 100).Content, opLine); n != 1 {
			t.Fatalf("operation applied %d times", n)
		}
	}},
	{"adversarial_stalled_create_after_delete", func(t *testing.T, e *Env) {
		// A create stalls in flight; its lease runs out and a replay applies
		// the operation; then the file is deleted. The stalled request
		// reaching the backend now must not bring the file back.
		path := "sc.md"
		o := op("sc-op", "fp")
		g, done := advStalledCreate(t, e, path, o)
		other := e.NewStore(t, e.Options(), nil)
		if _, err := AppendOnce(ctx(t), other, path, opLine, o, 16); err != nil {
			t.Fatalf("replay: %v", err)
		}
		f := read(t, other, path, 100)
		if f == nil {
			t.Fatal("the replay left no file")
		}
		if _, err := other.Delete(ctx(t), store.DeleteRequest{Path: path, Expected: f.Version}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		g.release()
		r := <-done
		if r.err != nil && !errors.Is(r.err, store.ErrConflict) {
			t.Fatalf("stalled attempt: %v", r.err)
		}
		if r.err == nil && !r.m.Replayed {
			t.Fatalf("the stalled attempt applied after the replay: %+v", r.m)
		}
		if f := read(t, other, path, 100); f != nil {
			t.Fatalf("the deleted file came back: %q", f.Content)
		}
		eqSlice(t, "listing", list(t, other, "", 10), nil)
	}},
	{"adversarial_lost_reply_then_overwritten", func(t *testing.T, e *Env) {
		// The change lands but its reply is lost; before the attempt looks
		// again, a plain writer settles the receipt and overwrites the row.
		// The attempt must not report a conflict for a change that landed.
		for _, del := range []bool{false, true} {
			t.Run(fmt.Sprintf("delete=%v", del), func(t *testing.T) {
				path := fmt.Sprintf("lr-%v.md", del)
				v := create(t, e.Store, path, "seed\n")
				o := op("lr-op-"+path, "fp")
				other := e.NewStore(t, e.Options(), nil)
				applies, wrote := 0, false
				var werr error
				s := e.NewStore(t, e.Options(), advHooks(func(call string) error {
					if isApply(call) && applies == 1 && !wrote {
						wrote = true
						_, werr = AppendOnce(ctx(t), other, path, writerLine, nil, 16)
					}
					return nil
				}, func(call string, err error) error {
					if isApply(call) {
						if applies++; applies == 1 {
							return errors.Join(ErrInjected, err)
						}
					}
					return err
				}))
				var m store.Mutation
				var err error
				if del {
					m, err = s.Delete(ctx(t), store.DeleteRequest{Path: path, Expected: v, Operation: o})
				} else {
					m, err = s.Write(ctx(t), store.WriteRequest{Path: path, Content: "seed\n" + opLine + "\n", Expected: v, Operation: o})
				}
				if werr != nil {
					t.Fatalf("plain writer: %v", werr)
				}
				if errors.Is(err, store.ErrConflict) {
					t.Fatalf("the change landed, yet the attempt reports %v", err)
				}
				if err != nil && !errors.Is(err, ErrInjected) {
					t.Fatalf("attempt: %v", err)
				}
				got, gerr := other.GetOperation(ctx(t), *o)
				if gerr != nil || got == nil || !got.Existed {
					t.Fatalf("GetOperation = %+v, %v", got, gerr)
				}
				if err == nil && (m.Replayed || m.Version != got.Version || !m.Existed) {
					t.Fatalf("attempt = %+v, receipt says %+v", m, got)
				}
				want := "seed\n" + opLine + "\n"
				switch {
				case del && wrote:
					want = writerLine + "\n"
				case del:
					want = ""
				case wrote:
					want += writerLine + "\n"
				}
				content := ""
				if f := read(t, other, path, 100); f != nil {
					content = f.Content
				}
				eq(t, "content", content, want)
			})
		}
	}},
	{"adversarial_receipt_reused_after_expiry", func(t *testing.T, e *Env) {
		// A store saw operation o completed; o's receipt then expires and o
		// is applied anew by a process that dies before completing it. When
		// the first store overwrites the row, it must still settle the new
		// attempt: the row is the only evidence that it landed.
		pr, ok := e.Raw.(driver.Pruner)
		if !ok || !driver.CapabilitiesOf(e.Raw).Prune {
			return // expiry is the backend's TTL; it cannot be forced here
		}
		clk := newAdvClock()
		s := e.NewStore(t, clk.options(), nil)
		path, o := "ex.md", op("ex-op", "fp")
		m1, err := s.Write(ctx(t), store.WriteRequest{Path: path, Content: "one\n", Operation: o})
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(2 * time.Hour)
		if _, err := pr.PruneExpired(ctx(t), clk.Now()); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetOperation(ctx(t), *o); err != nil || got != nil {
			t.Fatalf("expired receipt still answers: %+v, %v", got, err)
		}
		var dead atomic.Bool
		f := e.NewStore(t, clk.options(), advHooks(func(call string) error {
			if dead.Load() {
				return ErrInjected
			}
			return nil
		}, func(call string, err error) error {
			if isApply(call) {
				dead.Store(true)
				return errors.Join(ErrInjected, err)
			}
			return err
		}))
		_, err = f.Write(ctx(t), store.WriteRequest{Path: path, Content: "one\ntwo\n", Expected: m1.Version, Operation: o})
		mustErr(t, err, ErrInjected, "write that dies after landing")
		cur := read(t, s, path, 100)
		eq(t, "content", cur.Content, "one\ntwo\n")
		write(t, s, path, "three\n", cur.Version)
		clk.Add(time.Minute)
		got, err := e.NewStore(t, clk.options(), nil).GetOperation(ctx(t), *o)
		if err != nil || got == nil || got.Version != cur.Version {
			t.Fatalf("GetOperation = %+v, %v; the landed attempt wrote %s", got, err, cur.Version)
		}
	}},
	{"adversarial_settle_waits_for_new_attempt", func(t *testing.T, e *Env) {
		// C settles a dead attempt of o; meanwhile B settles it too and
		// starts a new attempt. C must give B's attempt its lease, not fence
		// it the moment it sees it.
		path, o := "nw.md", op("nw-op", "fp")
		clk, w := advDeadAttempt(t, e, path, o)
		cGate, bGate := newAdvGate(t), newAdvGate(t)
		var cReads atomic.Int32
		c := e.NewStore(t, clk.options(), advHooks(func(call string) error {
			switch {
			case call == "DropReceipt":
				cGate.hold()
			case call == "GetReceipt" && cReads.Add(1) == 3:
				bGate.release() // C is waiting: let B go on
			}
			return nil
		}, nil))
		cDone := make(chan advOpResult, 1)
		go func() {
			g, err := c.GetOperation(ctx(t), *o)
			bGate.release()
			cDone <- advOpResult{g, err}
		}()
		select {
		case <-cGate.entered:
		case r := <-cDone:
			cDone <- r // nothing pending (atomic path)
		}
		var bSettled atomic.Bool // B's own change comes after it dropped the dead attempt
		bDone := advWriteAsync(t, e, clk, path, w, o, func(call string) error {
			switch {
			case call == "DropReceipt":
				bSettled.Store(true)
			case call == "Mutate" || (call == "ReplaceFile" && bSettled.Load()):
				bGate.hold()
			}
			return nil
		})
		<-bGate.entered
		cGate.release()
		rb, rc := <-bDone, <-cDone
		if rb.err != nil || rb.m.Replayed {
			t.Fatalf("B, within its lease = %+v, %v", rb.m, rb.err)
		}
		if rc.err != nil || (!e.Store.Capabilities().AtomicMutation && (rc.g == nil || rc.g.Version != rb.m.Version)) {
			t.Fatalf("C's GetOperation = %+v, %v; B wrote %+v", rc.g, rc.err, rb.m)
		}
	}},
	{"adversarial_lease_starts_at_reservation", func(t *testing.T, e *Env) {
		// B spends long settling a dead attempt before it reserves its own.
		// Its lease must start at its reservation, or C fences it at once.
		path, o := "ls.md", op("ls-op", "fp")
		clk, w := advDeadAttempt(t, e, path, o)
		bGate := newAdvGate(t)
		var bSettled atomic.Bool // B's own change comes after it dropped the dead attempt
		bDone := advWriteAsync(t, e, clk, path, w, o, func(call string) error {
			switch {
			case call == "DropReceipt":
				clk.Add(time.Hour) // settling the dead attempt takes long
				bSettled.Store(true)
			case call == "Mutate" || (call == "ReplaceFile" && bSettled.Load()):
				bGate.hold()
			}
			return nil
		})
		<-bGate.entered
		var cReads atomic.Int32
		c := e.NewStore(t, clk.options(), advHooks(func(call string) error {
			if call == "GetReceipt" && cReads.Add(1) == 2 {
				bGate.release() // C is waiting: let B go on
			}
			return nil
		}, nil))
		g, err := c.GetOperation(ctx(t), *o)
		bGate.release()
		rb := <-bDone
		if rb.err != nil || rb.m.Replayed {
			t.Fatalf("B, within its lease = %+v, %v", rb.m, rb.err)
		}
		if err != nil || (!e.Store.Capabilities().AtomicMutation && (g == nil || g.Version != rb.m.Version)) {
			t.Fatalf("C's GetOperation = %+v, %v; B wrote %+v", g, err, rb.m)
		}
	}},
	{"adversarial_canceled_conflict_leaves_no_pending", func(t *testing.T, e *Env) {
		// The caller gives up just as its stale attempt fails. The failed
		// attempt must not leave a reservation that stalls the retry.
		path, o := "cc.md", op("cc-op", "fp")
		v := create(t, e.Store, path, "seed\n")
		w := write(t, e.Store, path, "moved on\n", v).Version
		cctx, cancel := context.WithCancel(ctx(t))
		defer cancel()
		i := NewInterceptor(e.Driver)
		i.After = func(call string, err error) error {
			if isApply(call) {
				cancel()
			}
			return err
		}
		s := e.NewStore(t, &store.Options{PendingTimeout: time.Hour}, func(driver.Driver) driver.Driver { return advCtxDriver{i} })
		_, err := s.Write(cctx, store.WriteRequest{Path: path, Content: "mine\n", Expected: v, Operation: o})
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, context.Canceled) {
			t.Fatalf("stale attempt: %v", err)
		}
		rctx, rcancel := context.WithTimeout(ctx(t), 5*time.Second) // far below the hour-long lease
		defer rcancel()
		m, err := s.Write(rctx, store.WriteRequest{Path: path, Content: "mine\n", Expected: w, Operation: o})
		if err != nil || m.Replayed {
			t.Fatalf("retry = %+v, %v", m, err)
		}
	}},

	// The cases below probe edges that hold; they guard the fixes above.
	{"adversarial_tombstones_never_listed_or_searched", func(t *testing.T, e *Env) {
		for i, p := range []string{"t/s/a.md", "t/s/b.md", "t/s/c.md", "t/s/d.md", "t/s/e.md"} {
			m, err := e.Store.Write(ctx(t), store.WriteRequest{Path: p, Content: "needle", Operation: op("ts-w-"+p, "fp")})
			if err != nil {
				t.Fatal(err)
			}
			var o *store.Operation
			if i%2 == 0 {
				o = op("ts-d-"+p, "fp")
			}
			if p != "t/s/e.md" {
				if _, err := e.Store.Delete(ctx(t), store.DeleteRequest{Path: p, Expected: m.Version, Operation: o}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A dead create whose settlement fences the path.
		o := op("ts-dead", "fp")
		if _, err := advCrashAfterReserve(t, e).Write(ctx(t), store.WriteRequest{Path: "t/s/0.md", Content: "needle", Operation: o}); !errors.Is(err, ErrInjected) {
			t.Fatalf("dead create: %v", err)
		}
		e.expireLeases()
		if got, err := e.Store.GetOperation(ctx(t), *o); err != nil || got != nil {
			t.Fatalf("GetOperation = %+v, %v", got, err)
		}
		for _, n := range []int{1, 2, 10} {
			eqSlice(t, fmt.Sprintf("list(t/s/, %d)", n), list(t, e.Store, "t/s/", n), []string{"t/s/e.md"})
			eqSlice(t, fmt.Sprintf("list(\"\", %d)", n), list(t, e.Store, "", n), []string{"t/s/e.md"})
		}
		res, err := e.Store.Search(ctx(t), search.Request{Prefix: "t/s/", Query: "needle md", Limit: 10, MaxFiles: 1, MaxChars: 1000, MaxFileChars: 1000})
		if err != nil || len(res.Matches) != 1 || res.Matches[0].Path != "t/s/e.md" || res.Scanned != 1 || res.Truncated {
			t.Fatalf("search = %+v, %v", res, err)
		}
		// Recreating over the tombstones works and reads back.
		for _, p := range []string{"t/s/0.md", "t/s/a.md", "t/s/b.md"} {
			create(t, e.Store, p, "again")
		}
		eqSlice(t, "after recreate", list(t, e.Store, "t/s/", 10), []string{"t/s/0.md", "t/s/a.md", "t/s/b.md", "t/s/e.md"})
	}},
	{"adversarial_concurrent_replays_of_dead_attempt", func(t *testing.T, e *Env) {
		// Eight replays race to settle one dead attempt, landed or not: the
		// operation applies exactly once and every replay reports it.
		for _, landed := range []bool{false, true} {
			t.Run(fmt.Sprintf("landed=%v", landed), func(t *testing.T) {
				path := fmt.Sprintf("cr-%v.md", landed)
				v := create(t, e.Store, path, "seed\n")
				o := op("cr-op-"+path, "fp")
				var dead atomic.Bool
				s := e.NewStore(t, e.Options(), advHooks(func(call string) error {
					if dead.Load() || (!landed && isApply(call)) {
						dead.Store(true)
						return ErrInjected
					}
					return nil
				}, func(call string, err error) error {
					if landed && isApply(call) {
						dead.Store(true)
						return errors.Join(ErrInjected, err)
					}
					return err
				}))
				_, err := s.Write(ctx(t), store.WriteRequest{Path: path, Content: "seed\n" + opLine + "\n", Expected: v, Operation: o})
				mustErr(t, err, ErrInjected, "dead attempt")
				e.expireLeases()
				const n = 8
				out := make(chan advResult, n)
				for range n {
					go func() {
						m, err := AppendOnce(ctx(t), e.NewStore(t, e.Options(), nil), path, opLine, o, 64)
						out <- advResult{m, err}
					}()
				}
				applied, version := 0, ""
				for range n {
					r := <-out
					if r.err != nil {
						t.Fatalf("replay: %v", r.err)
					}
					if !r.m.Replayed {
						applied++
					}
					if version == "" {
						version = r.m.Version
					}
					eq(t, "same version to all", r.m.Version, version)
				}
				want := 0
				if !landed {
					want = 1
				}
				eq(t, "replays that applied", applied, want)
				f := read(t, e.Store, path, 100)
				eq(t, "content", f.Content, "seed\n"+opLine+"\n")
				eq(t, "version", f.Version, version)
			})
		}
	}},
	{"adversarial_get_operation_honours_cancel", func(t *testing.T, e *Env) {
		// A reader waiting on a live attempt stops when its context ends,
		// and leaves the attempt alone.
		path, o := "gc.md", op("gc-op", "fp")
		if _, err := advCrashAfterReserve(t, e).Write(ctx(t), store.WriteRequest{Path: path, Content: opLine + "\n", Operation: o}); !errors.Is(err, ErrInjected) {
			t.Fatalf("dead attempt: %v", err)
		}
		patient := e.NewStore(t, &store.Options{PendingTimeout: time.Hour}, nil)
		if e.Store.Capabilities().AtomicMutation {
			// Nothing can be pending: no wait, so no short deadline (a slow
			// backend under load could miss it on its one request).
			got, err := patient.GetOperation(ctx(t), *o)
			if err != nil || got != nil {
				t.Fatalf("GetOperation = %+v, %v", got, err)
			}
		} else {
			c, cancel := context.WithTimeout(ctx(t), 20*time.Millisecond)
			defer cancel()
			_, err := patient.GetOperation(c, *o)
			mustErr(t, err, context.DeadlineExceeded, "GetOperation while the attempt is live")
		}
		e.expireLeases()
		if _, err := AppendOnce(ctx(t), e.Store, path, opLine, o, 16); err != nil {
			t.Fatalf("replay: %v", err)
		}
		eq(t, "content", read(t, e.Store, path, 100).Content, opLine+"\n")
	}},
}
