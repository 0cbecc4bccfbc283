package otel_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// fullNotebook returns a notebook over a store made by NewStore: tool,
// store and driver spans.
func fullNotebook(t *testing.T, h *harness, d driver.Driver) *memory.Memory {
	t.Helper()
	s, tr := amotel.NewStore(d, h.opts, nil)
	mem, err := memory.New(s, &memory.Options{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestStoreSpans checks the three levels of a notebook over NewStore: each
// tool span is the parent of store spans, each store span the parent of
// the backend requests it makes, and no backend request hangs elsewhere;
// and the store spans' names and GenAI attributes.
func TestStoreSpans(t *testing.T) {
	for name, d := range map[string]func() driver.Driver{
		"atomic":     func() driver.Driver { return mustMemDriver() },
		"primitives": func() driver.Driver { return hidden{mustMemDriver()} },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, amotel.Options{StoreID: "agent-memory"})
			useNotebook(t, fullNotebook(t, h, d()))
			spans := h.spans.Ended()
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, sp := range spans {
				byID[sp.SpanContext().SpanID()] = sp
			}
			level := func(sp sdktrace.ReadOnlySpan) string {
				switch {
				case sp.SpanKind() == trace.SpanKindClient:
					return "driver"
				case strings.HasPrefix(sp.Name(), "store."):
					return "store"
				default:
					return "tool"
				}
			}
			count := map[string]int{}
			var ops []string
			for _, sp := range spans {
				if sp.Name() == "store.Index" {
					continue // the store's background index work: a root of its own (TestBackgroundSpansAreNewRoots)
				}
				l := level(sp)
				count[l]++
				parent, ok := byID[sp.Parent().SpanID()]
				want := map[string]string{"driver": "store", "store": "tool"}[l]
				switch {
				case l == "tool" && sp.Parent().IsValid():
					t.Errorf("tool span %s has a parent", sp.Name())
				case l != "tool" && (!ok || level(parent) != want):
					t.Errorf("%s span %s: parent %v, want a %s span", l, sp.Name(), parent, want)
				}
				if l != "store" {
					continue
				}
				a := attrs(sp)
				op := a[amotel.KeyStoreOperation].AsString()
				ops = append(ops, parent.Name()+">"+sp.Name()+"/"+a[amotel.KeyGenAIOperation].AsString()+"/"+a[amotel.KeyStoreOutcome].AsString())
				if sp.Name() != "store."+op || sp.SpanKind() != trace.SpanKindInternal || a[amotel.KeyMemoryStoreID].AsString() != "agent-memory" {
					t.Errorf("store span %s: %v %v", sp.Name(), sp.SpanKind(), a)
				}
			}
			if count["tool"] != 7 || count["store"] == 0 || count["driver"] == 0 {
				t.Errorf("spans per level %v", count)
			}
			// The notebook's calls, in order: two writes of a new file (the
			// second a replay), a read, a search, a write whose old_text is
			// missing (a tool error after reading the file), a delete, the
			// injection.
			// On an atomic store the replay is the Write's answer (no
			// receipt lookup first); on primitives the lookup finds it.
			replay, replayOp := "upsert_memory>store.Write/update_memory/replayed", "Write"
			if name == "primitives" {
				replay, replayOp = "upsert_memory>store.GetOperation//replayed", "GetOperation"
			}
			got := strings.Join(ops, " ")
			for _, want := range []string{
				"upsert_memory>store.Write/create_memory/ok",
				replay,
				"search_memory>store.Read/search_memory/ok",
				"search_memory>store.Search/search_memory/ok",
				"delete_memory>store.Delete/delete_memory/ok",
				"search_memory>store.ReadAndList/search_memory/ok",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("no store span %s in\n%s", want, got)
				}
			}
			for _, sp := range spans {
				if sp.Name() == "store.Search" {
					if n := attrs(sp)[amotel.KeyRecordCount].AsInt64(); n != 1 {
						t.Errorf("store.Search record count %d, want 1", n)
					}
				}
			}
			m := h.metrics(t)
			if n := m["agentmem.replays{agentmem.store.operation="+replayOp+",gen_ai.memory.store.id=agent-memory}"]; n != 1 {
				t.Errorf("store replays = %d, want 1 (all: %v)", n, m)
			}
			if n := m["agentmem.store.operation.duration{agentmem.store.operation=Write,agentmem.store.outcome=ok,gen_ai.memory.store.id=agent-memory}"]; n != 1 {
				t.Errorf("store write durations = %d, want 1 (all: %v)", n, m)
			}
		})
	}
}

// TestStoreConflict checks a store span's Error status and the conflict
// counter on a stale write, and that a read of an absent file is not an
// error.
func TestStoreConflict(t *testing.T) {
	h := newHarness(t, amotel.Options{})
	s, _ := amotel.NewStore(newMemDriver(t), h.opts, nil)
	ctx := t.Context()
	if _, err := s.Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "y", Expected: "v-stale"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale write: %v", err)
	}
	if _, err := s.Read(ctx, "k/main/b.md", 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read: %v", err)
	}
	var conflict, absent sdktrace.ReadOnlySpan
	for _, sp := range h.spans.Ended() {
		switch a := attrs(sp); {
		case sp.Name() == "store.Write" && a[amotel.KeyGenAIOperation].AsString() == "update_memory":
			conflict = sp
		case sp.Name() == "store.Read":
			absent = sp
		}
	}
	if conflict == nil || absent == nil {
		t.Fatalf("spans: %v", h.spans.Ended())
	}
	if st, a := conflict.Status(), attrs(conflict); st.Code != codes.Error || st.Description != "conflict" ||
		a["error.type"].AsString() != "conflict" || a[amotel.KeyStoreOutcome].AsString() != "conflict" {
		t.Errorf("conflict: status %v, attributes %v", st, a)
	}
	if st, a := absent.Status(), attrs(absent); st.Code != codes.Unset || a[amotel.KeyStoreOutcome].AsString() != "not_found" {
		t.Errorf("absent read: status %v, attributes %v", st, a)
	}
	m := h.metrics(t)
	for name, want := range map[string]int64{
		"agentmem.conflicts{agentmem.store.operation=Write}":                                                1,
		"agentmem.store.operation.duration{agentmem.store.operation=Read,agentmem.store.outcome=not_found}": 1,
	} {
		if m[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, m[name], want, m)
		}
	}
}

// lossy runs on the nine primitives and fails the calls it is told to, as
// a backend does whose reply is lost: after a change landed (complete) or
// before it could (replace), or refuses every replace as if the row kept
// changing (moving).
type lossy struct {
	driver.Driver
	mu                        sync.Mutex
	complete, replace, moving bool
}

var errLost = errors.New("reply lost")

func (l *lossy) set(complete, replace, moving bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.complete, l.replace, l.moving = complete, replace, moving
}

func (l *lossy) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	l.mu.Lock()
	fail := l.complete
	l.mu.Unlock()
	if fail {
		return errLost
	}
	return l.Driver.CompleteReceipt(ctx, r)
}

func (l *lossy) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	l.mu.Lock()
	fail, moving := l.replace, l.moving
	l.mu.Unlock()
	switch {
	case moving:
		return errors.Join(errors.New("row moved"), driver.ErrPrecondition)
	case fail:
		return errLost
	}
	return l.Driver.ReplaceFile(ctx, f, expected)
}

// TestSettlements checks that each way the store settles a pending
// receipt is counted and marks the span of the operation that settled it:
// a write whose receipt could not be completed after it landed, replayed
// (completed); an update whose request failed, replayed (rolled back, then
// applied); and a replay on a row that keeps changing (gave up).
func TestSettlements(t *testing.T) {
	const p = "k/main/a.md"
	for _, tc := range []struct {
		name string
		// fail sets the faults of the first attempt, after the file exists.
		fail  func(l *lossy)
		retry func(l *lossy)
		want  string
		err   error
	}{
		{"completed", func(l *lossy) { l.set(true, false, false) }, func(l *lossy) { l.set(false, false, false) }, "completed", nil},
		{"rolled_back", func(l *lossy) { l.set(false, true, false) }, func(l *lossy) { l.set(false, false, false) }, "rolled_back", nil},
		{"gave_up", func(l *lossy) { l.set(false, true, false) }, func(l *lossy) { l.set(false, false, true) }, "gave_up", store.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, amotel.Options{StoreID: "agent-memory"})
			l := &lossy{Driver: newMemDriver(t)}
			s, _ := amotel.NewStore(l, h.opts, &store.Options{PendingTimeout: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			ctx := t.Context()
			m, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x"})
			if err != nil {
				t.Fatal(err)
			}
			w := store.WriteRequest{Path: p, Content: "y", Expected: m.Version, Operation: &store.Operation{ID: "run-1/call-1", Fingerprint: "fp"}}
			tc.fail(l)
			_, _ = s.Write(ctx, w)
			time.Sleep(2 * time.Millisecond) // the pending receipt's lease runs out
			tc.retry(l)
			if _, err := s.Write(ctx, w); !errors.Is(err, tc.err) {
				t.Fatalf("replay: %v, want %v", err, tc.err)
			}
			m2 := h.metrics(t)
			key := "agentmem.settlements{agentmem.settlement.outcome=" + tc.want + ",gen_ai.memory.store.id=agent-memory}"
			var total int64
			for k, v := range m2 {
				if strings.HasPrefix(k, "agentmem.settlements{") {
					total += v
				}
			}
			if m2[key] != 1 || total != 1 {
				t.Errorf("%s = %d, %d settlements in all, want 1 (all: %v)", key, m2[key], total, m2)
			}
			events := 0
			for _, sp := range h.spans.Ended() {
				for _, e := range sp.Events() {
					if e.Name == "agentmem.settlement" {
						events++
						if sp.Name() != "store.Write" || len(e.Attributes) != 1 || e.Attributes[0].Value.AsString() != tc.want {
							t.Errorf("settlement event on %s: %v", sp.Name(), e.Attributes)
						}
					}
				}
			}
			if events != 1 {
				t.Errorf("%d settlement events, want 1", events)
			}
		})
	}
}

// TestNewStoreNil checks that NewStore without a driver makes a store
// that fails with ErrNoDriver, and its spans say so.
func TestNewStoreNil(t *testing.T) {
	h := newHarness(t, amotel.Options{})
	s, tr := amotel.NewStore(nil, h.opts, nil)
	if tr == nil {
		t.Fatal("no tracer")
	}
	if _, err := s.Read(t.Context(), "a.md", 1); !errors.Is(err, store.ErrNoDriver) {
		t.Fatalf("Read = %v, want ErrNoDriver", err)
	}
	if sp := h.spans.Ended(); len(sp) != 1 || sp[0].Status().Description != "no_driver" {
		t.Errorf("spans %v", sp)
	}
}
