package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"

	"github.com/agentmem/agentmem/core/store"
)

type ctxKey struct{}

// Reference test 28: plumbing.
func TestPlumbing(t *testing.T) {
	s := store.New(memtest.NewDriver(t), nil)
	ctx := context.WithValue(t.Context(), ctxKey{}, "tenant/conversation")
	m := mustNew(t, s, &Options{AgentName: "researcher", NamespaceFunc: func(ctx context.Context) (string, error) {
		return ctx.Value(ctxKey{}).(string), nil
	}})
	if sc, err := m.Scope(ctx, Invocation{Namespace: "ignored"}); err != nil || sc != "tenant/conversation/researcher" {
		t.Fatalf("scope %q %v", sc, err)
	}
	if _, err := m.Call(ctx, inv("ignored"), "write_memory", mustJSON(t, map[string]any{"content": "x"})); err != nil {
		t.Fatal(err)
	}
	if memtest.Content(t, s, "tenant/conversation/researcher/MEMORY.md") != "x\n" {
		t.Fatal("write not at the resolved scope")
	}
	fixed := mustNew(t, s, &Options{Namespace: "acme"})
	if sc, _ := fixed.Scope(t.Context(), Invocation{Namespace: "kamal"}); sc != "acme/main" {
		t.Fatalf("fixed namespace scope %q", sc)
	}
	if sc, _ := mustNew(t, s, nil).Scope(t.Context(), Invocation{}); sc != "main" {
		t.Fatalf("no namespace scope %q", sc)
	}
	plain := mustNew(t, s, nil)
	for _, bad := range []string{"/tenant", "tenant/", "a b", "a/../b", "a/./b", ".", "x..y", "a//b"} {
		_, err := plain.Call(t.Context(), inv(bad), "read_memory", mustJSON(t, map[string]any{"file": "x"}))
		if !errors.Is(err, store.ErrInvalidPath) || strings.Contains(err.Error(), bad) && bad != "." {
			t.Fatalf("namespace %q: %v", bad, err)
		}
		if _, err := New(s, &Options{Namespace: bad}); !errors.Is(err, store.ErrInvalidPath) {
			t.Fatalf("New(Namespace %q): %v", bad, err)
		}
	}

	if m, _ := newMem(t, &Options{}); m.limits != (Limits{DefaultMaxTokens, DefaultMaxLines, DefaultMaxMemorySize,
		DefaultMaxSearchResults, DefaultMaxSearchResultChars, DefaultMaxSearchFiles}) || m.errMode != IgnoreErrors || m.agent != "main" {
		t.Fatalf("defaults %+v", m)
	}
	bad := []Options{
		{Limits: Limits{MaxTokens: -1}}, {Limits: Limits{MaxLines: -2}}, {Limits: Limits{MaxMemorySize: -5}},
		{Limits: Limits{MaxSearchResults: -1}}, {Limits: Limits{MaxSearchResultChars: -1}}, {Limits: Limits{MaxSearchFiles: -1}},
		{InjectionErrors: "sometimes"}, {AgentName: "a/b"}, {AgentName: ".."},
		{Namespace: "x", NamespaceFunc: func(context.Context) (string, error) { return "", nil }},
		{WriteMetadata: map[string]string{"a": "b"}, WriteMetadataFunc: func(context.Context) (map[string]string, error) { return nil, nil }},
		{WriteMetadata: map[string]string{"a\x00": "b"}}, {WriteMetadata: map[string]string{"k": strings.Repeat("v", 5000)}},
		{ToolPrefix: "bad prefix"}, {ToolPrefix: "9x"},
	}
	for i, o := range bad {
		if _, err := New(s, &o); err == nil {
			t.Errorf("bad options %d accepted: %+v", i, o)
		}
	}
	if _, err := New(nil, nil); !errors.Is(err, store.ErrNilArgument) {
		t.Fatalf("nil store: %v, want store.ErrNilArgument", err)
	}
}

func TestWriteMetadata(t *testing.T) {
	s := store.New(memtest.NewDriver(t), nil)
	fixed := mustNew(t, s, &Options{WriteMetadata: map[string]string{"updated_by": "agent"}})
	call(t, fixed, inv("kamal"), "write_memory", map[string]any{"content": "x"})
	f, err := s.Read(t.Context(), "kamal/main/MEMORY.md", 100)
	if err != nil || f.Metadata["updated_by"] != "agent" {
		t.Fatalf("metadata %v %v", f, err)
	}
	// The resolver runs before the write request; a replay never stores
	// its result. On the primitive path a receipt lookup comes first, so a
	// replay skips it; on an atomic store the write itself answers the
	// replay, so the resolver runs on it too.
	for _, c := range []struct {
		name      string
		s         *store.Store
		wantCalls int
	}{{"atomic", s, 2}, {"primitives", store.New(memtest.NewCounting(), nil), 1}} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			fn := mustNew(t, c.s, &Options{WriteMetadataFunc: func(ctx context.Context) (map[string]string, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				return map[string]string{"updated_by": "agent", "user": fmt.Sprint(ctx.Value(ctxKey{})), "call": fmt.Sprint(calls)}, nil
			}})
			ctx := context.WithValue(t.Context(), ctxKey{}, "kamal")
			in := inv("kamal")
			for range 2 {
				if _, err := fn.Call(ctx, in, "write_memory", mustJSON(t, map[string]any{"content": "y"})); err != nil {
					t.Fatal(err)
				}
			}
			f, _ := c.s.Read(t.Context(), "kamal/main/MEMORY.md", 100)
			if f.Metadata["user"] != "kamal" || f.Metadata["call"] != "1" || calls != c.wantCalls {
				t.Fatalf("metadata %v, resolver called %d times (want %d; the replay stores nothing)", f.Metadata, calls, c.wantCalls)
			}
		})
	}
}

// Reference test 29: telemetry carries no content, namespace or file name.
func TestTelemetry(t *testing.T) {
	d := memtest.NewCounting()
	s := store.New(d, nil)
	tr := &recTracer{}
	m := mustNew(t, s, &Options{Tracer: tr})
	const ns, secret = "tenant-kamal-42", "lives in Hanoi"
	call(t, m, inv(ns), "write_memory", map[string]any{"content": "- " + secret})
	call(t, m, inv(ns), "write_memory", map[string]any{"content": "- more", "file": "trip"})
	call(t, m, inv(ns), "read_memory", map[string]any{"file": "trip"})
	wantToolErr(t, call(t, m, inv(ns), "read_memory", map[string]any{"file": "absent"}), "no memory file")
	call(t, m, inv(ns), "search_memory", map[string]any{"query": "Hanoi"})
	call(t, m, inv(ns), "delete_memory", map[string]any{"file": "trip"})
	snapshot(t, m, ns)
	if err := s.WaitIndexed(t.Context()); err != nil { // the search index's reads end before the driver fails
		t.Fatal(err)
	}
	d.FailRead = errors.New("disk on fire: " + secret)
	snapshot(t, m, ns)

	for _, name := range []string{"memory.inject", "memory.write", "memory.read", "memory.search", "memory.delete"} {
		if len(tr.named(name)) == 0 {
			t.Fatalf("no %s span", name)
		}
	}
	for _, sp := range tr.spans {
		if !sp.ended {
			t.Fatalf("%s not ended", sp.name)
		}
		for k, v := range sp.attrs {
			sv := fmt.Sprint(v)
			for _, leak := range []string{ns, "kamal", secret, "Hanoi", "MEMORY.md", "trip", "absent", "disk on fire"} {
				if strings.Contains(sv, leak) {
					t.Fatalf("%s attribute %s = %q leaks %q", sp.name, k, sv, leak)
				}
			}
		}
		if len(sp.attrs["memory.scope_hash"].(string)) != 16 || sp.attrs["memory.backend"] != "memstore" {
			t.Fatalf("%s attrs %v", sp.name, sp.attrs)
		}
	}
	inj := tr.named("memory.inject")
	if a := inj[0].attrs; a["memory.outcome"] != "ok" || a["memory.injected_chars"].(int) == 0 || a["memory.main_chars"] != 17 {
		t.Fatalf("inject attrs %v", a)
	}
	if a := inj[1].attrs; a["memory.outcome"] != "error" || a["memory.exception_type"] != "BackendError" {
		t.Fatalf("failed inject attrs %v", a)
	}
	reads := tr.named("memory.read")
	if a := reads[1].attrs; a["memory.outcome"] != "error" || a["memory.exception_type"] != "ToolError" {
		t.Fatalf("failed read attrs %v", a)
	}
	if a := tr.named("memory.write")[0].attrs; a["memory.outcome"] != "ok" || a["memory.chars"] != 17 || a["memory.replayed"] != false {
		t.Fatalf("write attrs %v", a)
	}
	if a := tr.named("memory.delete")[0].attrs; a["memory.outcome"] != "deleted" {
		t.Fatalf("delete attrs %v", a)
	}
	if a := tr.named("memory.search")[0].attrs; a["memory.matches"] != 1 || a["memory.outcome"] != "ok" {
		t.Fatalf("search attrs %v", a)
	}
	// The guidance alone filling the budget is its own outcome.
	tr2 := &recTracer{}
	small := mustNew(t, store.New(memtest.NewCounting(), nil), &Options{Tracer: tr2, Limits: Limits{MaxTokens: 10}})
	snapshot(t, small, ns)
	if a := tr2.named("memory.inject")[0].attrs; a["memory.outcome"] != "budget_exhausted" {
		t.Fatalf("exhausted attrs %v", a)
	}
}

func TestRedact(t *testing.T) {
	m, s := newMem(t, nil)
	in := inv("kamal")
	call(t, m, in, "write_memory", map[string]any{"content": "a"})
	_, err := m.Call(t.Context(), in, "write_memory", mustJSON(t, map[string]any{"content": "b"}))
	r := Redact(err)
	if !errors.Is(r, store.ErrOperationConflict) || strings.Contains(r.Error(), "kamal") || !strings.Contains(r.Error(), "different arguments") {
		t.Fatalf("redacted %q", r)
	}
	_ = s
	leaky := fmt.Errorf("read %q: %w", "kamal/main/MEMORY.md", errors.New("connection reset"))
	if got := Redact(leaky).Error(); got != "memory: the memory store failed" {
		t.Fatalf("redacted %q", got)
	}
	if Redact(nil) != nil {
		t.Fatal("Redact(nil) != nil")
	}
	if got := Redact(context.Canceled); !errors.Is(got, context.Canceled) {
		t.Fatal("context error lost")
	}
}

// An invocation's metadata is recorded with its write and its delete, over
// the notebook's own: a key in both takes the invocation's value.
func TestInvocationMetadata(t *testing.T) {
	s := store.New(memtest.NewDriver(t), &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { _ = s.Close() })
	m := mustNew(t, s, &Options{WriteMetadata: map[string]string{UpdatedByKey: "agent", "app": "demo"}})
	in := inv("kamal")
	in.Metadata = map[string]string{UpdatedByKey: "kamal@example.com", ClientKey: "claude-code"}
	call(t, m, in, "write_memory", map[string]any{"content": "x", "file": "notes"})
	f, err := s.Read(t.Context(), "kamal/main/notes.md", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{UpdatedByKey: "kamal@example.com", ClientKey: "claude-code", "app": "demo"}
	if !maps.Equal(f.Metadata, want) {
		t.Fatalf("metadata %v, want %v", f.Metadata, want)
	}
	in = inv("kamal")
	in.Metadata = map[string]string{UpdatedByKey: "ana"}
	call(t, m, in, "delete_memory", map[string]any{"file": "notes"})
	page, err := s.History(t.Context(), store.HistoryRequest{Path: "kamal/main/notes.md", Limit: 1})
	if err != nil || len(page.Entries) != 1 || !page.Entries[0].Deleted || page.Entries[0].Metadata[UpdatedByKey] != "ana" {
		t.Fatalf("delete's history %+v, %v: want updated_by ana", page, err)
	}
	// The notebook's own metadata is not changed by a call's.
	call(t, m, inv("kamal"), "write_memory", map[string]any{"content": "y"})
	if f, _ := s.Read(t.Context(), "kamal/main/MEMORY.md", 100); f.Metadata[UpdatedByKey] != "agent" || f.Metadata[ClientKey] != "" {
		t.Fatalf("later write's metadata %v", f.Metadata)
	}
	// Metadata the store refuses fails the call and writes nothing.
	in = inv("kamal")
	in.Metadata = map[string]string{"bad\x00key": "v"}
	if _, err := m.Call(t.Context(), in, "write_memory", mustJSON(t, map[string]any{"content": "z", "file": "bad"})); !errors.Is(err, store.ErrInvalidMetadata) {
		t.Fatalf("invalid invocation metadata: %v, want ErrInvalidMetadata", err)
	}
}

// TestResolveOnce: a call given the Scope that Resolve returned resolves
// nothing again (NamespaceFunc is asked once for the resolution and the
// calls after it), and a Scope another Memory resolved is ignored.
func TestResolveOnce(t *testing.T) {
	s := store.New(memtest.NewDriver(t), nil)
	asked := 0
	m := mustNew(t, s, &Options{NamespaceFunc: func(context.Context) (string, error) {
		asked++
		return "kamal", nil
	}})
	sc, err := m.Resolve(t.Context(), Invocation{})
	if err != nil || sc.Path() != "kamal/main" || asked != 1 {
		t.Fatalf("Resolve = %q, %v after %d resolutions; want kamal/main after 1", sc.Path(), err, asked)
	}
	call := Invocation{Scope: sc, RunID: "run", ToolCallID: "call-1"}
	if _, err := m.Call(t.Context(), call, "write_memory", mustJSON(t, map[string]any{"content": "- tea"})); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(t.Context(), call, "read_memory", mustJSON(t, map[string]any{"file": "MEMORY.md"})); err != nil {
		t.Fatal(err)
	}
	if block, err := m.SnapshotOf(t.Context(), call); err != nil || !strings.Contains(block, "- tea") {
		t.Fatalf("SnapshotOf = %q, %v", block, err)
	}
	if again, err := m.Resolve(t.Context(), call); err != nil || again != sc {
		t.Fatalf("Resolve of a resolved call = %+v, %v; want the same scope", again, err)
	}
	if asked != 1 {
		t.Fatalf("NamespaceFunc asked %d times for one resolution and its calls; want 1", asked)
	}
	if memtest.Content(t, s, "kamal/main/MEMORY.md") != "- tea\n" {
		t.Fatal("write not at the resolved scope")
	}
	other := mustNew(t, s, &Options{AgentName: "researcher"})
	if p, err := other.Scope(t.Context(), Invocation{Namespace: "ana", Scope: sc}); err != nil || p != "ana/researcher" {
		t.Fatalf("another Memory's Scope: %q, %v; want it ignored (ana/researcher)", p, err)
	}
	if (Scope{}).Path() != "" {
		t.Fatal("the zero Scope has a path")
	}
	var none *Memory
	if _, err := none.Resolve(t.Context(), Invocation{}); !errors.Is(err, store.ErrNilArgument) {
		t.Fatalf("Resolve on a nil Memory: %v, want store.ErrNilArgument", err)
	}
}

// TestContextIDs: WithUserID and WithRunID carry their ids apart, a
// context without them (or nil) has none, and neither panics on nil.
func TestContextIDs(t *testing.T) {
	ctx := WithRunID(WithUserID(t.Context(), "kamal"), "run-1")
	if UserID(ctx) != "kamal" || RunID(ctx) != "run-1" {
		t.Fatalf("UserID, RunID = %q, %q; want kamal, run-1", UserID(ctx), RunID(ctx))
	}
	if UserID(t.Context()) != "" || RunID(WithUserID(t.Context(), "kamal")) != "" {
		t.Fatal("an id where none was given")
	}
	var none context.Context
	if UserID(none) != "" || RunID(none) != "" || UserID(WithUserID(none, "ana")) != "ana" || RunID(WithRunID(none, "r")) != "r" {
		t.Fatal("nil ctx")
	}
}
