package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// harness records the spans and metrics of one test.
type harness struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	opts   *amotel.Options
}

func newHarness(t *testing.T, opts amotel.Options) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	h.opts = &opts
	return h
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// metrics returns every data point as "name{k=v,…}" → value (the sum for
// counters, the count for histograms).
func (h *harness) metrics(t *testing.T) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	key := func(name string, set attribute.Set) string {
		var parts []string
		for _, kv := range set.ToSlice() {
			parts = append(parts, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
		}
		return name + "{" + strings.Join(parts, ",") + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(m.Name, p.Attributes)] += int64(p.Count)
				}
			default:
				t.Fatalf("unexpected metric %s of type %T", m.Name, m.Data)
			}
		}
	}
	return out
}

// TestDriverSpans checks the client spans, the histogram and the conflict
// counter of a wrapped memstore, on a write and on a conflict.
func TestDriverSpans(t *testing.T) {
	h := newHarness(t, amotel.Options{Collection: "memory_files"})
	// The file is created unwrapped: a create also reads what would
	// collide with it, and this test counts the Mutate of an update.
	d := newMemDriver(t)
	ctx := t.Context()
	m, err := store.New(d, nil).Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(amotel.WrapDriver(d, h.opts), nil)
	if _, err := s.Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "y", Expected: m.Version}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "z", Expected: "v-stale"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale write: %v, want ErrConflict", err)
	}
	spans := h.spans.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2 (one Mutate per write)", len(spans))
	}
	for i, sp := range spans {
		a := attrs(sp)
		if sp.Name() != "Mutate memory_files" || sp.SpanKind() != trace.SpanKindClient ||
			a["db.system.name"].AsString() != "agentmem.memstore" || a["db.operation.name"].AsString() != "Mutate" ||
			a["db.collection.name"].AsString() != "memory_files" {
			t.Errorf("span %d: %s %v %v", i, sp.Name(), sp.SpanKind(), a)
		}
	}
	if st := spans[0].Status(); st.Code != codes.Unset {
		t.Errorf("write status = %v", st)
	}
	if st, a := spans[1].Status(), attrs(spans[1]); st.Code != codes.Error || st.Description != "precondition_failed" ||
		a["error.type"].AsString() != "precondition_failed" {
		t.Errorf("conflict: status %v, error.type %v; want Error, precondition_failed", st, a["error.type"])
	}
	got := h.metrics(t)
	base := "db.collection.name=memory_files,db.operation.name=Mutate,db.system.name=agentmem.memstore"
	for name, want := range map[string]int64{
		"db.client.operation.duration{" + base + "}":                                1,
		"db.client.operation.duration{" + base + ",error.type=precondition_failed}": 1,
		"agentmem.conflicts{" + base + "}":                                          1,
	} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, got[name], want, got)
		}
	}
}

// TestDriverCounters checks the replay counter on an atomic replay and the
// prune counter.
func TestDriverCounters(t *testing.T) {
	h := newHarness(t, amotel.Options{})
	now := time.Now()
	s := store.New(amotel.WrapDriver(newMemDriver(t), h.opts), &store.Options{ReceiptRetention: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	w := store.WriteRequest{Path: "k/main/a.md", Content: "x", Operation: &store.Operation{ID: "op", Fingerprint: "fp"}}
	for range 2 {
		if _, err := s.Write(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	if n, err := s.PruneExpired(ctx); err != nil || n != 1 {
		t.Fatalf("PruneExpired = %d, %v; want 1", n, err)
	}
	got := h.metrics(t)
	for name, want := range map[string]int64{
		"agentmem.replays{db.operation.name=Mutate,db.system.name=agentmem.memstore}":               1,
		"agentmem.receipts.pruned{db.operation.name=PruneExpired,db.system.name=agentmem.memstore}": 1,
	} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d (all: %v)", name, got[name], want, got)
		}
	}
}

// full implements every optional interface over memstore and reports
// only caps, as contract's wrappers do.
type full struct {
	*memstore.Driver
	caps driver.Capabilities
}

func (f full) DriverCapabilities() driver.Capabilities { return f.caps }

// hidden hides every optional interface of memstore.
type hidden struct{ driver.Driver }

// named is a driver with a backend name of its own (driver.Namer).
type named struct {
	driver.Driver
	name string
}

func (n named) Name() string { return n.name }

// TestCapabilities checks that the wrapper implements every optional
// interface and reports, through driver.CapabilityReporter, exactly those
// the store would use on the inner driver, in all 16 combinations, and
// still works through each.
func TestCapabilities(t *testing.T) {
	for mask := range 16 {
		caps := driver.Capabilities{AtomicMutation: mask&1 != 0, BatchGet: mask&2 != 0, ScopeRead: mask&4 != 0, Prune: mask&8 != 0}
		w := amotel.WrapDriver(full{newMemDriver(t), caps}, nil)
		_, m := w.(driver.Mutator)
		_, b := w.(driver.BatchGetter)
		_, s := w.(driver.ScopeReader)
		_, p := w.(driver.Pruner)
		_, r := w.(driver.CapabilityReporter)
		if !m || !b || !s || !p || !r {
			t.Errorf("inner %+v: the wrapper lacks an optional interface (Mutator %v, BatchGetter %v, ScopeReader %v, Pruner %v, CapabilityReporter %v)", caps, m, b, s, p, r)
		}
		if got := driver.CapabilitiesOf(w); got != caps {
			t.Errorf("inner %+v: reported %+v", caps, got)
		}
		st := store.New(w, nil)
		ctx := t.Context()
		if _, err := st.Write(ctx, store.WriteRequest{Path: "k/main/a.md", Content: "x", Operation: &store.Operation{ID: "o", Fingerprint: "f"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Search(ctx, search.Request{Prefix: "k/main/", Query: "x", Limit: 5, MaxFiles: 5, MaxChars: 100, MaxFileChars: 100}); err != nil {
			t.Fatal(err)
		}
	}
	if c := driver.CapabilitiesOf(amotel.WrapDriver(hidden{newMemDriver(t)}, nil)); c != (driver.Capabilities{}) {
		t.Errorf("primitives only: %+v", c)
	}
	// A fast path the inner driver lacks fails rather than panics, should
	// anything call it despite the report.
	hw := amotel.WrapDriver(hidden{newMemDriver(t)}, nil)
	if _, err := hw.(driver.Mutator).Mutate(t.Context(), driver.MutateParams{Path: "k/a.md"}); err == nil {
		t.Error("Mutate over a driver without it: no error")
	}
	if _, err := hw.(driver.BatchGetter).GetFiles(t.Context(), []string{"k/a.md"}); err == nil {
		t.Error("GetFiles over a driver without it: no error")
	}
	if _, err := hw.(driver.ScopeReader).ReadScope(t.Context(), driver.ScopeParams{Prefix: "k/"}); err == nil {
		t.Error("ReadScope over a driver without it: no error")
	}
	if _, err := hw.(driver.Pruner).PruneExpired(t.Context(), time.Now()); err == nil {
		t.Error("PruneExpired over a driver without it: no error")
	}
	if amotel.WrapDriver(nil, nil) != nil {
		t.Error("WrapDriver(nil) is not nil")
	}
}

// TestSystemNames checks the detected and configured db.system.name.
func TestSystemNames(t *testing.T) {
	for _, tc := range []struct {
		d    driver.Driver
		opts amotel.Options
		want string
	}{
		{newMemDriver(t), amotel.Options{}, "agentmem.memstore"},
		{amotel.WrapDriver(newMemDriver(t), nil), amotel.Options{}, "agentmem.memstore"}, // the wrapper forwards Name
		{hidden{newMemDriver(t)}, amotel.Options{}, "other"},
		{named{hidden{newMemDriver(t)}, "sqlite"}, amotel.Options{}, "sqlite"}, // from Name, not the type
		{newMemDriver(t), amotel.Options{System: "postgresql"}, "postgresql"},
	} {
		h := newHarness(t, tc.opts)
		w := amotel.WrapDriver(tc.d, h.opts)
		if got, want := driver.Name(w), driver.Name(tc.d); got != want {
			t.Errorf("%T: the wrapper's name %q, want the inner driver's %q", tc.d, got, want)
		}
		if _, err := w.GetFile(t.Context(), "a.md"); err != nil {
			t.Fatal(err)
		}
		sp := h.spans.Ended()[0]
		if got := attrs(sp)["db.system.name"].AsString(); got != tc.want || sp.Name() != "GetFile "+tc.want {
			t.Errorf("%T %+v: %q %q, want %q", tc.d, tc.opts.System, sp.Name(), got, tc.want)
		}
	}
}

// notebook returns a notebook over an instrumented memstore.
func notebook(t *testing.T, h *harness, d driver.Driver) *memory.Memory {
	t.Helper()
	wd, tr := amotel.Instrument(d, h.opts)
	mem, err := memory.New(store.New(wd, nil), &memory.Options{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

const (
	secretContent = "secret-content-about-hanoi"
	secretNS      = "tenant-secret"
	secretQuery   = "needle-query"
	secretCall    = "call-user-42"
)

func useNotebook(t *testing.T, mem *memory.Memory) {
	t.Helper()
	ctx := t.Context()
	for i, c := range []struct{ tool, args string }{
		{"write_memory", `{"content": "` + secretContent + `", "file": "travel", "old_text": null}`},
		{"write_memory", `{"content": "` + secretContent + `", "file": "travel", "old_text": null}`}, // replayed
		{"read_memory", `{"file": "travel.md"}`},
		{"search_memory", `{"query": "` + secretQuery + ` hanoi"}`},
		{"write_memory", `{"content": "z", "file": "travel", "old_text": "not-there-` + secretContent + `"}`}, // a tool error
		{"delete_memory", `{"file": "travel.md"}`},
	} {
		in := memory.Invocation{Namespace: secretNS, RunID: "run-1", ToolCallID: fmt.Sprintf("%s-%d", secretCall, max(i, 1))}
		if _, err := mem.Call(ctx, in, c.tool, json.RawMessage(c.args)); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
	}
	if _, err := mem.Snapshot(ctx, secretNS); err != nil {
		t.Fatal(err)
	}
}

// TestNotebookSpans checks the GenAI spans of tool calls, that backend
// requests are their children, and the replay counter.
func TestNotebookSpans(t *testing.T) {
	h := newHarness(t, amotel.Options{StoreID: "agent-memory"})
	mem := notebook(t, h, newMemDriver(t))
	useNotebook(t, mem)
	var tools []sdktrace.ReadOnlySpan
	ids := map[trace.SpanID]string{}
	for _, sp := range h.spans.Ended() {
		if sp.SpanKind() == trace.SpanKindInternal {
			tools = append(tools, sp)
			ids[sp.SpanContext().SpanID()] = sp.Name()
		}
	}
	var names []string
	for _, sp := range tools {
		a := attrs(sp)
		names = append(names, sp.Name()+"/"+a["agentmem.memory.span"].AsString())
		if a["gen_ai.operation.name"].AsString() != sp.Name() || a["gen_ai.memory.store.id"].AsString() != "agent-memory" ||
			a["memory.backend"].AsString() != "memstore" || a["memory.outcome"].AsString() == "" {
			t.Errorf("%s: %v", sp.Name(), a)
		}
	}
	want := "upsert_memory/memory.write upsert_memory/memory.write search_memory/memory.read search_memory/memory.search upsert_memory/memory.write delete_memory/memory.delete search_memory/memory.inject"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tool spans:\n%s\nwant\n%s", got, want)
	}
	if a := attrs(tools[3]); a["gen_ai.memory.record.count"].AsInt64() != 1 {
		t.Errorf("search: record count %v, want 1", a["gen_ai.memory.record.count"])
	}
	if st, a := tools[4].Status(), attrs(tools[4]); st.Code != codes.Error || a["error.type"].AsString() != "ToolError" {
		t.Errorf("failed write: status %v, error.type %v", st, a["error.type"])
	}
	for _, sp := range h.spans.Ended() {
		if sp.SpanKind() != trace.SpanKindClient {
			continue
		}
		if !sp.Parent().IsValid() && slices.Contains([]string{"GetFile", "GetFiles", "ListFiles", "ReadScope"}, strings.Fields(sp.Name())[0]) {
			continue // the search index's background reads: a trace of their own
		}
		if _, ok := ids[sp.Parent().SpanID()]; !ok {
			t.Errorf("driver span %s has no tool span as parent", sp.Name())
		}
	}
	if got := h.metrics(t)["agentmem.replays{gen_ai.operation.name=upsert_memory}"]; got != 1 {
		t.Errorf("notebook replays = %d, want 1", got)
	}
}

// TestNoContentByDefault checks that no span, event, status or metric
// carries content, queries, namespaces, paths or call ids, on both store
// paths; RecordPaths adds paths and nothing else.
func TestNoContentByDefault(t *testing.T) {
	secrets := []string{secretContent, secretQuery, secretNS, secretCall, "travel", "hanoi"}
	for _, record := range []bool{false, true} {
		for name, d := range map[string]func() driver.Driver{
			"atomic":     func() driver.Driver { return mustMemDriver() },
			"primitives": func() driver.Driver { return hidden{mustMemDriver()} },
		} {
			h := newHarness(t, amotel.Options{RecordPaths: record})
			useNotebook(t, notebook(t, h, d()))
			useNotebook(t, fullNotebook(t, h, d()))
			var texts []string
			for _, sp := range h.spans.Ended() {
				texts = append(texts, sp.Name(), sp.Status().Description)
				for _, kv := range sp.Attributes() {
					if record && kv.Key == amotel.KeyPath {
						continue
					}
					texts = append(texts, string(kv.Key)+"="+kv.Value.Emit())
				}
				for _, e := range sp.Events() {
					texts = append(texts, fmt.Sprint(e))
				}
			}
			for k := range h.metrics(t) {
				texts = append(texts, k)
			}
			all := strings.Join(texts, "\n")
			for _, s := range secrets {
				if strings.Contains(all, s) {
					t.Errorf("%s, RecordPaths %v: telemetry holds %q", name, record, s)
				}
			}
			paths := 0
			for _, sp := range h.spans.Ended() {
				if v, ok := attrs(sp)[amotel.KeyPath]; ok && strings.HasPrefix(v.AsString(), secretNS+"/") {
					paths++
				}
			}
			if record != (paths > 0) {
				t.Errorf("%s, RecordPaths %v: %d spans with a path", name, record, paths)
			}
		}
	}
}

// TestWrapperKeepsFastPaths checks that an instrumented driver keeps the
// inner driver's per-turn fast paths: the collision check inside Mutate
// and the snapshot's one-request read, which is one span.
func TestWrapperKeepsFastPaths(t *testing.T) {
	inner := newMemDriver(t)
	h := newHarness(t, amotel.Options{})
	w := amotel.WrapDriver(inner, h.opts)
	if got, want := driver.CapabilitiesOf(w), driver.CapabilitiesOf(inner); got != want || !got.Snapshot || !got.AtomicCollision || !got.Append || !got.History {
		t.Fatalf("capabilities through the wrapper %+v, inner %+v", got, want)
	}
	st := store.New(w, nil)
	ctx := t.Context()
	if _, err := st.Write(ctx, store.WriteRequest{Path: "k/main/MEMORY.md", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	before := len(h.spans.Ended())
	res, err := st.ReadAndList(ctx, store.ReadAndListRequest{Path: "k/main/MEMORY.md", MaxChars: 100, Prefix: "k/main/", Limit: 10})
	if err != nil || res.File == nil || len(res.Paths) != 1 {
		t.Fatalf("ReadAndList: %+v, %v", res, err)
	}
	var names []string
	for _, s := range h.spans.Ended()[before:] {
		names = append(names, s.Name())
	}
	if len(names) != 1 || names[0] != "ReadSnapshot agentmem.memstore" {
		t.Errorf("spans of one snapshot read: %q, want one ReadSnapshot", names)
	}
	// An append is one Append span.
	before = len(h.spans.Ended())
	if _, err := st.Append(ctx, store.AppendRequest{Path: "k/main/MEMORY.md", Text: "y", MaxChars: 100}); err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, s := range h.spans.Ended()[before:] {
		names = append(names, s.Name())
	}
	if len(names) != 1 || names[0] != "Append agentmem.memstore" {
		t.Errorf("spans of one append: %q, want one Append", names)
	}
	// Without the capability the wrapper's ReadSnapshot still answers.
	hw := amotel.WrapDriver(hidden{newMemDriver(t)}, nil).(driver.SnapshotReader)
	if f, entries, err := hw.ReadSnapshot(ctx, driver.SnapshotParams{Path: "k/main/MEMORY.md", List: driver.ListParams{Prefix: "k/", Limit: 5}}); err != nil || f != nil || len(entries) != 0 {
		t.Errorf("ReadSnapshot of an empty store without the capability: %v, %v, %v", f, entries, err)
	}
}

// TestWrapperKeepsHistory checks that a store over an instrumented driver
// records and reads history, with a span per history call.
func TestWrapperKeepsHistory(t *testing.T) {
	h := newHarness(t, amotel.Options{})
	st := store.New(amotel.WrapDriver(newMemDriver(t), h.opts), &store.Options{History: &store.HistoryOptions{}})
	ctx := t.Context()
	m, err := st.Write(ctx, store.WriteRequest{Path: "k/a.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	before := len(h.spans.Ended())
	page, err := st.History(ctx, store.HistoryRequest{Path: "k/a.md", Limit: 10})
	if err != nil || len(page.Entries) != 1 || page.Entries[0].Version != m.Version {
		t.Fatalf("history through the wrapper = %+v, %v", page, err)
	}
	spans := h.spans.Ended()[before:]
	if len(spans) != 1 || spans[0].Name() != "ListHistory agentmem.memstore" {
		t.Fatalf("spans of a history read: %d, first %q", len(spans), spans[0].Name())
	}
}
