package contract

import (
	"errors"
	"fmt"
	"strings"
	"testing"

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

// nativeAfterCrashCase: a tracked write crashes at every backend call,
// leaving its receipt pending and perhaps its row written; then a writer
// appends through the backend's own append (a driver.Appender where there
// is one, over the unwrapped driver), which overwrites that row; then the
// operation is replayed. Whoever overwrites a row first completes the
// operation that wrote it, so the replay reports the write as done when
// it landed (never applies it twice) and as a conflict when it did not.
func nativeAfterCrashCase(sc faultScenario) Case {
	return Case{sc.name + "_then_native_append", func(t *testing.T, e *Env) {
		n := sc.calls(t, e)
		for _, mode := range []FaultMode{Crash, CrashAfter} {
			for k := 1; k <= n; k++ {
				t.Run(fmt.Sprintf("%s/k%d", mode, k), func(t *testing.T) {
					sc.checkNative(t, e, mode, k)
				})
			}
		}
	}}
}

func (sc faultScenario) checkNative(t *testing.T, e *Env, mode FaultMode, k int) {
	path := fmt.Sprintf("n/%s-%s-%d.md", sc.name, mode, k)
	o := op("op-"+path, "fp")
	expected, content := "", opLine+"\n"
	if sc.seed {
		expected, content = create(t, e.Store, path, "seed\n"), "seed\n"+opLine+"\n"
	}
	req := store.WriteRequest{Path: path, Content: content, Expected: expected, Operation: o}
	f := NewFaults(e.Driver)
	f.Inject(k, mode)
	m1, err1 := store.New(f, e.Options()).Write(ctx(t), req)
	if err1 != nil && !errors.Is(err1, ErrInjected) {
		t.Fatalf("faulty run: %v (calls %v)", err1, f.Calls())
	}
	landed := false
	if cur := read(t, e.Store, path, 1000); cur != nil && cur.OperationID == o.ID && cur.Content == content {
		landed = true
	}
	native := store.New(shared(e.Raw), e.Options())
	if _, err := native.Append(ctx(t), store.AppendRequest{Path: path, Text: writerLine, MaxChars: 1000}); err != nil {
		t.Fatalf("native append: %v", err)
	}
	e.expireLeases() // let the dead attempt's lease run out
	replayer := e.NewStore(t, e.Options(), nil)
	m2, err := replayer.Write(ctx(t), req)
	switch {
	case landed && (err != nil || !m2.Replayed):
		t.Fatalf("replay of a write that landed = %+v, %v; want it replayed (faulty run %+v, %v; calls %v)", m2, err, m1, err1, f.Calls())
	case landed && err1 == nil && m2.Version != m1.Version:
		t.Fatalf("replay version %q, want %q", m2.Version, m1.Version)
	case !landed && !errors.Is(err, store.ErrConflict):
		t.Fatalf("replay of a write that did not land = %+v, %v; want ErrConflict (calls %v)", m2, err, f.Calls())
	}
	got := read(t, replayer, path, 1000)
	want := "seed\n" + writerLine + "\n"
	switch {
	case landed && sc.seed:
		want = "seed\n" + opLine + "\n" + writerLine + "\n"
	case landed:
		want = opLine + "\n" + writerLine + "\n"
	case !sc.seed:
		want = writerLine + "\n"
	}
	if got == nil || got.Content != want {
		t.Fatalf("file = %+v, want %q (landed %v, replay %+v, %v)", got, want, landed, m2, err)
	}
}

// nativeAfterCrashCases replace an existing file. (A create that crashed
// leaves a tombstone, which a Mutator backend shared with a primitive-path
// writer does not yet accept as absent: not covered here.)
var nativeAfterCrashCases = []Case{
	nativeAfterCrashCase(faultScenarios[1]),
}
