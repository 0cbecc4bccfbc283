package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// faultScenario is one exactly-once check: an operation runs on a store
// whose k-th backend call fails as mode says, optionally a plain writer
// changes the file in the window, then a fresh store replays the operation.
type faultScenario struct {
	name   string
	delete bool // delete instead of append
	seed   bool // the file exists before the operation
}

var faultScenarios = []faultScenario{
	{name: "fault_write_create"},
	{name: "fault_write_update", seed: true},
	{name: "fault_delete", delete: true, seed: true},
}

const (
	opLine     = "op-line"
	writerLine = "writer-line"
)

func (sc faultScenario) run(t *testing.T, e *Env, s *store.Store, path string, o *store.Operation) (store.Mutation, error) {
	if sc.delete {
		return DeleteOnce(ctx(t), s, path, o, 16)
	}
	return AppendOnce(ctx(t), s, path, opLine, o, 16)
}

// calls counts the backend calls of the scenario's operation on a clean run.
func (sc faultScenario) calls(t *testing.T, e *Env) int {
	path := "count/" + sc.name + ".md"
	if sc.seed {
		create(t, e.Store, path, "seed\n")
	}
	c := NewCounter(e.Driver)
	if _, err := sc.run(t, e, store.New(c, e.Options()), path, op("count-"+sc.name, "fp")); err != nil {
		t.Fatal(err)
	}
	return c.Total()
}

func (sc faultScenario) check(t *testing.T, e *Env, mode FaultMode, k int, writer bool) {
	path := fmt.Sprintf("f/%s-%s-%d-%v.md", sc.name, mode, k, writer)
	o := op("op-"+path, "fp")
	if sc.seed {
		create(t, e.Store, path, "seed\n")
	}
	f := NewFaults(e.Driver)
	faulty := store.New(f, e.Options())
	f.Inject(k, mode)
	m1, err1 := sc.run(t, e, faulty, path, o)
	if err1 != nil && !errors.Is(err1, ErrInjected) {
		t.Fatalf("faulty run: %v (calls %v)", err1, f.Calls())
	}
	if writer {
		if _, err := AppendOnce(ctx(t), e.Store, path, writerLine, nil, 16); err != nil {
			t.Fatalf("plain writer: %v", err)
		}
	}
	if mode == Crash || mode == CrashAfter {
		e.expireLeases() // let the dead attempt's lease run out
	}
	replayer := e.NewStore(t, e.Options(), nil)
	m2, err := sc.run(t, e, replayer, path, o)
	if err != nil {
		t.Fatalf("replay: %v (faulty run: %+v, %v; calls %v)", err, m1, err1, f.Calls())
	}
	if err1 == nil && (!m2.Replayed || m2.Version != m1.Version || m2.Existed != m1.Existed) {
		t.Fatalf("replay of a successful run = %+v, want replay of %+v", m2, m1)
	}
	g, err := replayer.GetOperation(ctx(t), *o)
	if err != nil || g == nil || g.Version != m2.Version || g.Existed != m2.Existed || !g.Replayed {
		t.Fatalf("GetOperation = %+v, %v; replay was %+v", g, err, m2)
	}
	cur := read(t, replayer, path, 1000)
	content := ""
	if cur != nil {
		content = cur.Content
	}
	if sc.delete {
		switch {
		case !m2.Existed:
			t.Fatalf("the delete reports the file absent: %+v", m2)
		case !m2.Replayed && cur != nil:
			t.Fatalf("the replay deleted, yet the file holds %q", content)
		case m2.Replayed && writer && content != writerLine+"\n":
			t.Fatalf("delete landed before the writer, yet the file holds %q", content)
		case m2.Replayed && !writer && cur != nil:
			t.Fatalf("the delete landed, yet the file holds %q", content)
		}
		return
	}
	if n := strings.Count(content, opLine+"\n"); n != 1 {
		t.Fatalf("operation applied %d times: %q (first run %+v, %v; calls %v)", n, content, m1, err1, f.Calls())
	}
	if writer && strings.Count(content, writerLine+"\n") != 1 {
		t.Fatalf("writer's line lost or doubled: %q", content)
	}
	if sc.seed && !strings.HasPrefix(content, "seed\n") {
		t.Fatalf("seed lost: %q", content)
	}
	if !writer {
		eq(t, "version", cur.Version, m2.Version)
		eq(t, "operation id", cur.OperationID, o.ID)
	}
}

func faultCase(sc faultScenario) Case {
	return Case{sc.name, func(t *testing.T, e *Env) {
		n := sc.calls(t, e)
		if n < 2 {
			t.Fatalf("the operation made only %d backend calls", n)
		}
		for _, mode := range []FaultMode{FailBefore, ReplyLost, Crash, CrashAfter} {
			for k := 1; k <= n; k++ {
				for _, writer := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/k%d/writer=%v", mode, k, writer), func(t *testing.T) {
						sc.check(t, e, mode, k, writer)
					})
				}
			}
		}
	}}
}

var faultCases = func() []Case {
	var out []Case
	for _, sc := range faultScenarios {
		out = append(out, faultCase(sc))
	}
	return out
}()

// afterCrashWriter is how another writer changes the file after an
// operation crashed: through the backend's own fast paths (a store over
// the unwrapped driver), so that a primitive-path operation's leftovers
// meet the atomic mutation and the native append.
type afterCrashWriter struct {
	name string
	// write adds writerLine to the file at path through s.
	write func(ctx context.Context, t *testing.T, s *store.Store, path string) error
}

var afterCrashWriters = []afterCrashWriter{
	{"native_append", func(ctx context.Context, t *testing.T, s *store.Store, path string) error {
		_, err := s.Append(ctx, store.AppendRequest{Path: path, Text: writerLine, MaxChars: 1000})
		return err
	}},
	{"atomic_write", func(ctx context.Context, t *testing.T, s *store.Store, path string) error {
		// A compare-and-swap on the version read, as the notebook's
		// tools write: the row read is the crashed operation's, if it
		// landed, or a tombstone it left (read as absent).
		req := store.WriteRequest{Path: path, Content: writerLine + "\n"}
		if f := read(t, s, path, 1000); f != nil {
			req.Content, req.Expected = f.Content+writerLine+"\n", f.Version
		} else if m, err := s.Delete(ctx, store.DeleteRequest{Path: path}); err != nil || m.Existed {
			// What reads as absent is absent to a delete, too.
			return fmt.Errorf("delete of the absent file = %+v, %w", m, err)
		}
		_, err := s.Write(ctx, req)
		return err
	}},
}

// afterCrashCase: a tracked operation crashes at every backend call,
// leaving its receipt pending and perhaps its row (a file, or a delete's
// tombstone) written; then another writer changes the file through the
// backend's fast paths (over the unwrapped driver: a native append, or a
// write with the version read, through a Mutator where there is one),
// which overwrites that row; then the operation is replayed. Whoever
// overwrites a row first completes the operation that wrote it, so the
// replay reports the operation as done when it landed (never applies it
// twice) and as a conflict when it did not; and a tombstone, whatever
// operation it records, never makes the path look taken.
func afterCrashCase(sc faultScenario, w afterCrashWriter) Case {
	return Case{sc.name + "_then_" + w.name, func(t *testing.T, e *Env) {
		n := sc.calls(t, e)
		for _, mode := range []FaultMode{Crash, CrashAfter} {
			for k := 1; k <= n; k++ {
				t.Run(fmt.Sprintf("%s/k%d", mode, k), func(t *testing.T) {
					sc.checkAfterCrash(t, e, w, mode, k)
				})
			}
		}
	}}
}

func (sc faultScenario) checkAfterCrash(t *testing.T, e *Env, w afterCrashWriter, mode FaultMode, k int) {
	path := fmt.Sprintf("n/%s-%s-%s-%d.md", sc.name, w.name, mode, k)
	o := op("op-"+path, "fp")
	seed := ""
	if sc.seed {
		seed = create(t, e.Store, path, "seed\n")
	}
	run := func(s *store.Store) (store.Mutation, error) {
		if sc.delete {
			return s.Delete(ctx(t), store.DeleteRequest{Path: path, Expected: seed, Operation: o})
		}
		content := opLine + "\n"
		if sc.seed {
			content = "seed\n" + content
		}
		return s.Write(ctx(t), store.WriteRequest{Path: path, Content: content, Expected: seed, Operation: o})
	}
	f := NewFaults(e.Driver)
	f.Inject(k, mode)
	m1, err1 := run(store.New(f, e.Options()))
	if err1 != nil && !errors.Is(err1, ErrInjected) {
		t.Fatalf("faulty run: %v (calls %v)", err1, f.Calls())
	}
	before := ""
	if cur := read(t, e.Store, path, 1000); cur != nil {
		before = cur.Content
	}
	var landed bool
	switch {
	case sc.delete:
		landed = before == ""
	case sc.seed:
		landed = before == "seed\n"+opLine+"\n"
	default:
		landed = before == opLine+"\n"
	}
	// Bounded: an append keeps retrying conflicts until its context ends.
	wctx, cancel := context.WithTimeout(ctx(t), time.Minute)
	defer cancel()
	if err := w.write(wctx, t, store.New(shared(e.Raw), e.Options()), path); err != nil {
		t.Fatalf("%s after the crash (landed %v): %v (calls %v)", w.name, landed, err, f.Calls())
	}
	e.expireLeases() // let the dead attempt's lease run out
	replayer := e.NewStore(t, e.Options(), nil)
	m2, err := run(replayer)
	switch {
	case landed && (err != nil || !m2.Replayed):
		t.Fatalf("replay of an operation that landed = %+v, %v; want it replayed (faulty run %+v, %v; calls %v)", m2, err, m1, err1, f.Calls())
	case landed && err1 == nil && (m2.Version != m1.Version || m2.Existed != m1.Existed):
		t.Fatalf("replay = %+v, want %+v", m2, m1)
	case landed && m2.Existed != sc.seed:
		t.Fatalf("replay = %+v, want Existed %v", m2, sc.seed)
	case !landed && !errors.Is(err, store.ErrConflict):
		t.Fatalf("replay of an operation that did not land = %+v, %v; want ErrConflict (calls %v)", m2, err, f.Calls())
	}
	want := before + writerLine + "\n"
	if got := read(t, replayer, path, 1000); got == nil || got.Content != want {
		t.Fatalf("file = %+v, want %q (landed %v, replay %+v, %v)", got, want, landed, m2, err)
	}
}

// afterCrashCases cover a create, an update and a delete that crashed,
// each followed by each writer.
var afterCrashCases = func() []Case {
	var out []Case
	for _, sc := range faultScenarios {
		for _, w := range afterCrashWriters {
			out = append(out, afterCrashCase(sc, w))
		}
	}
	return out
}()
