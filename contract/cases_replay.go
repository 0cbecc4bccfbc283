package contract

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentmem/agentmem/core/store"
)

// replayKind is one kind of mutation the store offers with an Operation.
// The crash-replay sweep crashes it at every backend call and replays the
// identical request (same expected version, no re-read) from a fresh store.
type replayKind struct {
	name string
	seed bool // the file exists before the operation
	// blind: the mutation writes no row (a delete of a path expected
	// absent), so nothing shows that it ran; when its completion is lost,
	// the replay checks again instead of replaying.
	blind bool
	// do runs the mutation; expected is the seed's version ("" if none).
	do func(t *testing.T, s *store.Store, path, expected string, o *store.Operation) (store.Mutation, error)
	// after is the content the operation leaves, applied on top of base
	// (the content before it); ok false means the path is absent.
	after func(base string) (content string, ok bool)
}

var replayMeta = map[string]string{"by": "operation"}

func replayWrite(t *testing.T, s *store.Store, path, expected string, o *store.Operation) (store.Mutation, error) {
	return s.Write(ctx(t), store.WriteRequest{Path: path, Content: "seed\n" + opLine + "\n", Expected: expected, Operation: o, Metadata: replayMeta})
}

func replayDelete(t *testing.T, s *store.Store, path, expected string, o *store.Operation) (store.Mutation, error) {
	return s.Delete(ctx(t), store.DeleteRequest{Path: path, Expected: expected, Operation: o})
}

var replayKinds = []replayKind{
	{name: "create", do: replayWrite, after: func(string) (string, bool) { return "seed\n" + opLine + "\n", true }},
	{name: "update", seed: true, do: replayWrite, after: func(string) (string, bool) { return "seed\n" + opLine + "\n", true }},
	{name: "delete", seed: true, do: replayDelete, after: func(string) (string, bool) { return "", false }},
	{name: "delete_absent", blind: true, do: replayDelete, after: func(string) (string, bool) { return "", false }},
}

// calls counts the backend calls of the mutation on a clean run.
func (k replayKind) calls(t *testing.T, e *Env) int {
	path := "count/" + k.name + ".md"
	expected := ""
	if k.seed {
		expected = create(t, e.Store, path, "seed\n")
	}
	c := NewCounter(e.Driver)
	if _, err := k.do(t, store.New(c, e.Options()), path, expected, op("count-"+k.name, "fp")); err != nil {
		t.Fatal(err)
	}
	return c.Total()
}

// setup returns a fresh path for one run of the sweep, its operation and
// the version the mutation expects (the seed's, or "").
func (k replayKind) setup(t *testing.T, e *Env, name string) (path string, o *store.Operation, expected string) {
	path = "replay/" + k.name + "-" + name + ".md"
	if k.seed {
		expected = create(t, e.Store, path, "seed\n")
	}
	return path, op("op-"+path, "fp"), expected
}

// crashed runs the mutation on a store whose n-th backend call crashes as
// mode says.
func (k replayKind) crashed(t *testing.T, e *Env, path, expected string, o *store.Operation, mode FaultMode, n int) (store.Mutation, error, string) {
	f := NewFaults(e.Driver)
	f.Inject(n, mode)
	m, err := k.do(t, store.New(f, e.Options()), path, expected, o)
	if err != nil && !errors.Is(err, ErrInjected) {
		t.Fatalf("crashed run: %v (calls %v)", err, f.Calls())
	}
	return m, err, fmt.Sprintf("(crashed run %+v, %v; calls %v)", m, err, f.Calls())
}

// check crashes the mutation at its n-th backend call, optionally lets a
// plain writer append a line, then replays the identical request from a
// fresh store once the dead attempt's lease has run out.
func (k replayKind) check(t *testing.T, e *Env, mode FaultMode, n int, writer bool) {
	path, o, expected := k.setup(t, e, fmt.Sprintf("%s-%d-%v", mode, n, writer))
	m1, err1, what := k.crashed(t, e, path, expected, o, mode, n)
	if writer {
		if _, err := AppendOnce(ctx(t), e.Store, path, writerLine, nil, 16); err != nil {
			t.Fatalf("plain writer: %v", err)
		}
	}
	k.verify(t, e, path, expected, o, m1, err1, writer, what)
}

// verify replays the identical request from a fresh store once every lease
// has run out, after a crashed run that returned m1, err1: without another
// writer it must apply exactly once (or return the landed result); with
// one, a conflict must be true.
func (k replayKind) verify(t *testing.T, e *Env, path, expected string, o *store.Operation, m1 store.Mutation, err1 error, writer bool, what string) {
	e.expireLeases() // the dead attempt's lease runs out
	replayer := e.NewStore(t, e.Options(), nil)
	m2, err := k.do(t, replayer, path, expected, o)
	cur := read(t, replayer, path, 1000)
	if err1 == nil && !k.blind && (err != nil || !m2.Replayed || m2 != (store.Mutation{Version: m1.Version, Existed: m1.Existed, Replayed: true})) {
		t.Fatalf("replay of a completed run = %+v, %v %s", m2, err, what)
	}
	if err != nil {
		if !writer {
			t.Fatalf("replay with no other writer: %v %s", err, what)
		}
		mustErr(t, err, store.ErrConflict, "replay after another writer")
		// A truthful conflict: the operation never landed.
		if g, gerr := replayer.GetOperation(ctx(t), *o); gerr != nil || g != nil {
			t.Fatalf("GetOperation after a conflicting replay = %+v, %v %s", g, gerr, what)
		}
		want := writerLine + "\n"
		if k.seed {
			want = "seed\n" + want
		}
		if cur == nil || cur.Content != want {
			t.Fatalf("after a conflicting replay the file is %+v, want %q %s", cur, want, what)
		}
		return
	}
	eq(t, "existed", m2.Existed, expected != "")
	if writer && !m2.Replayed {
		t.Fatalf("the replay applied over another writer's change: %+v %s", m2, what)
	}
	// The result is recorded: a second replay answers the same.
	again, err := k.do(t, e.NewStore(t, e.Options(), nil), path, expected, o)
	if err != nil || again != (store.Mutation{Version: m2.Version, Existed: m2.Existed, Replayed: true}) {
		t.Fatalf("second replay = %+v, %v; first %+v %s", again, err, m2, what)
	}
	if g, err := replayer.GetOperation(ctx(t), *o); err != nil || g == nil || *g != again {
		t.Fatalf("GetOperation = %+v, %v; replay was %+v", g, err, again)
	}
	content, ok := k.after("seed\n")
	if writer {
		// The operation landed before the writer, who appended to it.
		content, ok = content+writerLine+"\n", true
	}
	switch {
	case !ok && cur != nil:
		t.Fatalf("the deleted file holds %q %s", cur.Content, what)
	case ok && (cur == nil || cur.Content != content):
		t.Fatalf("file = %+v, want %q (applied once) %s", cur, content, what)
	case ok && !writer:
		eq(t, "version", cur.Version, m2.Version)
		eq(t, "operation id", cur.OperationID, o.ID)
		eq(t, "metadata", fmt.Sprint(cur.Metadata), fmt.Sprint(replayMeta))
	}
}

func replayCase(k replayKind) Case {
	return Case{"crash_replay_" + k.name, func(t *testing.T, e *Env) {
		n := k.calls(t, e)
		if n < 1 {
			t.Fatalf("the operation made no backend calls")
		}
		for _, mode := range []FaultMode{Crash, CrashAfter} {
			for i := 1; i <= n; i++ {
				for _, writer := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/k%d/writer=%v", mode, i, writer), func(t *testing.T) {
						k.check(t, e, mode, i, writer)
					})
				}
			}
		}
	}}
}

// replayCases crash every kind of tracked mutation at every backend call
// and replay the identical request: with nobody else writing, the replay
// applies exactly once (or returns the landed result) and never conflicts
// on the store's own fence; with a concurrent writer, a conflict is true.
var replayCases = func() []Case {
	var out []Case
	for _, k := range replayKinds {
		out = append(out, replayCase(k))
	}
	for _, k := range replayKinds {
		out = append(out, replayTwiceCase(k))
	}
	return out
}()

// replayTwiceCase crashes the mutation right after its reservation lands,
// then crashes its first replay at every backend call, then replays it
// again: settlements that fence the row twice must not make the last
// replay conflict.
func replayTwiceCase(k replayKind) Case {
	return Case{"crash_replay_twice_" + k.name, func(t *testing.T, e *Env) {
		firstCrash := func(path, expected string, o *store.Operation) {
			if _, err := k.do(t, advCrashAfterReserve(t, e), path, expected, o); !errors.Is(err, ErrInjected) {
				t.Fatalf("first crashed run: %v", err)
			}
			e.expireLeases()
		}
		path, o, expected := k.setup(t, e, "count-twice")
		firstCrash(path, expected, o)
		c := NewCounter(e.Driver)
		if _, err := k.do(t, store.New(c, e.Options()), path, expected, o); err != nil {
			t.Fatal(err)
		}
		n := c.Total()
		for _, mode := range []FaultMode{Crash, CrashAfter} {
			for i := 1; i <= n; i++ {
				t.Run(fmt.Sprintf("%s/k%d", mode, i), func(t *testing.T) {
					path, o, expected := k.setup(t, e, fmt.Sprintf("twice-%s-%d", mode, i))
					firstCrash(path, expected, o)
					m1, err1, what := k.crashed(t, e, path, expected, o, mode, i)
					k.verify(t, e, path, expected, o, m1, err1, false, what)
				})
			}
		}
	}}
}
