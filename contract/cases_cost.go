package contract

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// The cost targets the suite holds every backend to, in backend calls
// (requests a Counter sees), on a store with the capability named.
const (
	// ToolWriteCalls is a write_memory or delete_memory call, or an
	// idempotent memory.Append, on a store with an atomic mutation: the
	// tool's read and one atomic request whose receipt check answers a
	// replay. A create costs the same where the Mutate checks
	// file/folder collisions itself (driver.CollisionChecker).
	ToolWriteCalls = 2
	// CollisionCheckCalls is what a create adds where the store checks
	// collisions itself: one batched read of the ancestors and one
	// one-entry listing.
	CollisionCheckCalls = 2
	// AppendCalls is an idempotent memory.Append (or store.Append) of a
	// file that exists, and its replay, on a store with driver.Appender:
	// one request, no read first.
	AppendCalls = 1
	// SnapshotCalls is the notebook's per-request snapshot on a store with
	// driver.SnapshotReader; without it the snapshot makes two calls,
	// issued concurrently (one round trip).
	SnapshotCalls = 1
)

// costEnv is a notebook over a store that counts the backend calls of the
// Env's driver.
type costEnv struct {
	s   *store.Store
	c   *Counter
	mem *memory.Memory
}

func newCostEnv(t *testing.T, e *Env) *costEnv {
	var c *Counter
	s := e.NewStore(t, e.Options(), func(d driver.Driver) driver.Driver {
		c = NewCounter(d)
		return c
	})
	t.Cleanup(func() { _ = s.Close() })
	m, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &costEnv{s: s, c: c, mem: m}
}

// call runs one tool call of run "run" and returns its result and the
// backend calls it made.
func (ce *costEnv) call(t *testing.T, tool, callID string, args map[string]any) (any, map[string]int) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ce.c.Reset()
	res, err := ce.mem.Call(ctx(t), memory.Invocation{Namespace: "cost", RunID: "run", ToolCallID: callID}, tool, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, callID, err)
	}
	if te, ok := res.(*memory.ToolError); ok {
		t.Fatalf("%s %s: tool error %v", tool, callID, te)
	}
	return res, ce.c.Counts()
}

func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// atMost fails when an operation made more backend calls than want, on a
// store whose capability promises it; otherwise it only logs the count.
func atMost(t *testing.T, what string, counts map[string]int, promised bool, want int) {
	t.Helper()
	n := total(counts)
	t.Logf("%s: %d backend calls %v", what, n, counts)
	if promised && n > want {
		t.Fatalf("%s: %d backend calls %v, want at most %d", what, n, counts, want)
	}
}

var costCases = []Case{
	{"cost_tool_writes", func(t *testing.T, e *Env) {
		// The notebook's writes and deletes, creates included, and their
		// replays: the read the tool needs plus one atomic request on a
		// store with an atomic mutation (plus the file/folder check for a
		// create where the driver does not check it itself). Results are
		// unchanged: a replay still returns the original result.
		ce := newCostEnv(t, e)
		caps := ce.s.Capabilities()
		atomic := caps.AtomicMutation
		create := ToolWriteCalls
		if !caps.AtomicCollision {
			create += CollisionCheckCalls
		}
		res, n := ce.call(t, "write_memory", "c1", map[string]any{"content": "- first"})
		atMost(t, "create", n, atomic, create)
		first := res.(*memory.WriteResult)
		res, n = ce.call(t, "write_memory", "c1", map[string]any{"content": "- first"})
		atMost(t, "replay of a create", n, atomic, create)
		if r := res.(*memory.WriteResult); !r.Replayed || r.Version != first.Version || r.Status != "created" {
			t.Fatalf("replay of the create = %+v, want the original %+v replayed", r, first)
		}
		res, n = ce.call(t, "write_memory", "c2", map[string]any{"content": "- second"})
		atMost(t, "append", n, atomic, ToolWriteCalls)
		second := res.(*memory.WriteResult)
		if second.Status != "appended" {
			t.Fatalf("append = %+v", second)
		}
		res, n = ce.call(t, "write_memory", "c2", map[string]any{"content": "- second"})
		atMost(t, "replay of an append", n, atomic, ToolWriteCalls)
		if r := res.(*memory.WriteResult); !r.Replayed || r.Version != second.Version || r.Status != "appended" {
			t.Fatalf("replay of the append = %+v, want the original %+v replayed", r, second)
		}
		eq(t, "content", read(t, ce.s, "cost/main/MEMORY.md", 100).Content, "- first\n- second\n")
		res, n = ce.call(t, "write_memory", "c3", map[string]any{"content": "- 2nd", "old_text": "- second"})
		atMost(t, "edit", n, atomic, ToolWriteCalls)
		if r := res.(*memory.WriteResult); r.Status != "updated" {
			t.Fatalf("edit = %+v", r)
		}
		// A replay of the edit reads a file where old_text is gone: the
		// tool then asks for the receipt, which answers.
		res, _ = ce.call(t, "write_memory", "c3", map[string]any{"content": "- 2nd", "old_text": "- second"})
		if r := res.(*memory.WriteResult); !r.Replayed || r.Status != "updated" {
			t.Fatalf("replay of the edit = %+v", r)
		}
		ce.call(t, "write_memory", "c4", map[string]any{"file": "topic", "content": "- a topic"})
		res, n = ce.call(t, "delete_memory", "d1", map[string]any{"file": "topic"})
		atMost(t, "delete", n, atomic, ToolWriteCalls)
		if r := res.(*memory.DeleteResult); r.Status != "deleted" || r.Replayed {
			t.Fatalf("delete = %+v", r)
		}
		res, n = ce.call(t, "delete_memory", "d1", map[string]any{"file": "topic"})
		atMost(t, "replay of a delete", n, atomic, ToolWriteCalls)
		if r := res.(*memory.DeleteResult); r.Status != "deleted" || !r.Replayed {
			t.Fatalf("replay of the delete = %+v", r)
		}
		eq(t, "content at the end", read(t, ce.s, "cost/main/MEMORY.md", 100).Content, "- first\n- 2nd\n")
	}},
	{"cost_append", func(t *testing.T, e *Env) {
		// memory.Append with an operation: one read and one atomic request
		// on a store with an atomic mutation, its replay too.
		ce := newCostEnv(t, e)
		atomic := ce.s.Capabilities().AtomicMutation
		const path = "cost/main/log.md"
		create(t, ce.s, path, "- start\n")
		ce.c.Reset()
		m, err := memory.Append(ctx(t), ce.s, path, "- appended", &memory.AppendOptions{OperationID: "job/1"})
		if err != nil || m.Replayed {
			t.Fatalf("append = %+v, %v", m, err)
		}
		atMost(t, "append", ce.c.Counts(), atomic, ToolWriteCalls)
		atMost(t, "append with an Appender", ce.c.Counts(), ce.s.Capabilities().Append, AppendCalls)
		ce.c.Reset()
		m2, err := memory.Append(ctx(t), ce.s, path, "- appended", &memory.AppendOptions{OperationID: "job/1"})
		if err != nil || !m2.Replayed || m2.Version != m.Version {
			t.Fatalf("replayed append = %+v, %v; want the original %+v replayed", m2, err, m)
		}
		atMost(t, "replay of an append", ce.c.Counts(), atomic, ToolWriteCalls)
		atMost(t, "replay of an append with an Appender", ce.c.Counts(), ce.s.Capabilities().Append, AppendCalls)
		// A replay that finds the file too large to append to again still
		// returns the original result.
		big := strings.Repeat("x", 200)
		write(t, ce.s, path, big, m.Version)
		m3, err := memory.Append(ctx(t), ce.s, path, "- appended", &memory.AppendOptions{OperationID: "job/1", MaxMemorySize: 100})
		if err != nil || !m3.Replayed || m3.Version != m.Version {
			t.Fatalf("replay over a grown file = %+v, %v; want the original %+v replayed", m3, err, m)
		}
		eq(t, "content", read(t, ce.s, path, 1000).Content, big)
	}},
	{"cost_snapshot", func(t *testing.T, e *Env) {
		// The per-request snapshot is one round trip: one call on a store
		// with driver.SnapshotReader, otherwise a read and a listing that
		// are in flight together (each waits here for the other; issued
		// one after the other, the first would wait in vain).
		ce := newCostEnv(t, e)
		create(t, ce.s, "cost/main/MEMORY.md", "- a fact\n")
		create(t, ce.s, "cost/main/topic.md", "- a topic\n")
		snapshot := func() string {
			block, err := ce.mem.Snapshot(ctx(t), "cost")
			if err != nil {
				t.Fatal(err)
			}
			return block
		}
		ce.c.Reset()
		var meet *rendezvous
		if !ce.s.Capabilities().Snapshot {
			meet = newRendezvous("GetFile", "ListFiles")
			ce.c.Before = meet.wait(ce.c.Before)
		}
		block := snapshot()
		n := ce.c.Counts()
		t.Logf("snapshot: %d backend calls %v", total(n), n)
		if meet != nil {
			if err := meet.err(); err != nil {
				t.Fatal(err)
			}
			eq(t, "calls", total(n), 2)
		} else {
			eq(t, "calls", total(n), SnapshotCalls)
		}
		for _, want := range []string{"- a fact", "topic.md"} {
			if !strings.Contains(block, want) {
				t.Fatalf("snapshot %q lacks %q", block, want)
			}
		}
	}},
	{"atomic_collision_race", func(t *testing.T, e *Env) {
		// Where the driver checks file/folder collisions in its atomic
		// mutation, concurrent creates of a file and of a file below it
		// never both land (elsewhere both may: see the store's package
		// doc).
		if !e.Store.Capabilities().AtomicCollision {
			t.Logf("%s (%s) does not promise atomic collision checks: each create is only checked to succeed or collide", e.h.Name, e.Mode)
		}
		for i := range 10 {
			file := fmt.Sprintf("race/%d/x.md", i)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for j, p := range []string{file, file + "/y.md"} {
				wg.Go(func() {
					_, errs[j] = e.Store.Write(ctx(t), store.WriteRequest{Path: p, Content: "x", Operation: op(fmt.Sprint("race/", i, "/", j), "f")})
				})
			}
			wg.Wait()
			landed := 0
			for _, err := range errs {
				switch {
				case err == nil:
					landed++
				default:
					mustErr(t, err, store.ErrPathCollision, "racing create")
				}
			}
			if landed == 0 || (landed == 2 && e.Store.Capabilities().AtomicCollision) {
				t.Fatalf("round %d: %d of the two racing creates landed, want 1 (errors %v)", i, landed, errs)
			}
		}
	}},
}

// rendezvous holds each named call until every one has arrived, or a
// timeout passes (then err says which were not in flight together).
type rendezvous struct {
	mu      sync.Mutex
	pending map[string]bool
	all     chan struct{}
	failed  error
}

func newRendezvous(calls ...string) *rendezvous {
	r := &rendezvous{pending: map[string]bool{}, all: make(chan struct{})}
	for _, c := range calls {
		r.pending[c] = true
	}
	return r
}

// wait returns a Before hook that holds the named calls, then runs next.
func (r *rendezvous) wait(next func(string) error) func(string) error {
	return func(call string) error {
		r.mu.Lock()
		if r.pending[call] {
			delete(r.pending, call)
			if len(r.pending) == 0 {
				close(r.all)
			}
		}
		r.mu.Unlock()
		select {
		case <-r.all:
		case <-time.After(5 * time.Second):
			r.mu.Lock()
			r.failed = fmt.Errorf("%s waited 5s for the other calls of the snapshot: they are not issued concurrently", call)
			r.mu.Unlock()
		}
		if next != nil {
			return next(call)
		}
		return nil
	}
}

func (r *rendezvous) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
