package otel

import (
	"context"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of store spans and metrics (agentmem's own, beside the
// GenAI memory keys).
const (
	// KeyStoreOperation is the Store method: Read, ListPaths, Walk,
	// Search, Write, Delete, GetOperation, PruneExpired.
	KeyStoreOperation = attribute.Key("agentmem.store.operation")
	// KeyStoreOutcome is how a store operation ended: ok, replayed, or the
	// error's kind (store.ErrorKind: not_found, conflict, …).
	KeyStoreOutcome = attribute.Key("agentmem.store.outcome")
	// KeySettlement is how a pending receipt was settled: completed,
	// rolled_back or gave_up.
	KeySettlement = attribute.Key("agentmem.settlement.outcome")
)

// Metric names of the store observer.
const (
	// MetricStoreDuration is the agentmem.store.operation.duration
	// histogram (seconds) of store operations, with
	// agentmem.store.operation and agentmem.store.outcome.
	MetricStoreDuration = "agentmem.store.operation.duration"
	// MetricSettlements counts pending receipts the store settled, with
	// agentmem.settlement.outcome: completed (the attempt had landed),
	// rolled_back (it had not: fenced and dropped), gave_up (the path kept
	// changing; the receipt stays pending).
	MetricSettlements = "agentmem.settlements"
)

// storeOp is what an observer computes once per store operation kind.
type storeOp struct {
	name   string
	search bool // a retrieval: gen_ai.memory.record.count applies
	starts []trace.SpanStartOption
	base   []attribute.KeyValue // metric attributes before the outcome
	// Per usual outcome, computed once: the histogram's attributes.
	record map[string][]metric.RecordOption
	add    []metric.AddOption // the counters' attributes
}

// usualOutcomes are the outcomes whose metric attributes are computed
// once; others are computed per call.
var usualOutcomes = []string{store.OutcomeOK, store.OutcomeReplayed, "not_found", "conflict"}

// observer bridges store.Observer to OpenTelemetry.
type observer struct {
	in          *instruments
	duration    metric.Float64Histogram
	settlements metric.Int64Counter
	ops         map[store.OperationInfo]*storeOp
}

var _ store.Observer = (*observer)(nil)

// NewObserver returns a store.Observer (for store.Options.Observer) that
// makes one INTERNAL span per store operation, named "store.{operation}"
// (store.Write, store.Read, …): the child of the notebook's tool span and
// the parent of the backend requests the operation makes. Attributes:
// agentmem.store.operation; gen_ai.operation.name where a GenAI memory
// operation applies (create_memory for a Write that creates,
// update_memory for another Write, delete_memory, search_memory for Read,
// ListPaths, Walk and Search); gen_ai.memory.store.id (Options.StoreID,
// when set); gen_ai.memory.record.count for retrievals;
// agentmem.store.outcome; on failure error.type (the error's kind) with an
// Error status — except not_found, an answer rather than a failure.
// Each settlement of a pending receipt adds an agentmem.settlement event
// to the operation's span. A background indexing job (store.Index) is a
// new root span, linked to the span of the write or search that queued
// it, never its child.
//
// Metrics: the [MetricStoreDuration] histogram, the [MetricSettlements]
// counter, and points of [MetricConflicts] and [MetricReplays] with
// agentmem.store.operation (replays included on the primitive path, which
// the driver wrapper cannot see).
//
// Spans and metrics carry no content, query, path, namespace or operation
// id: the store tells its observer none.
func NewObserver(opts *Options) store.Observer {
	return newObserver(newInstruments(opts))
}

func newObserver(in *instruments) *observer {
	o := &observer{in: in, ops: map[store.OperationInfo]*storeOp{}}
	// Instrument errors only report invalid names or units, which these
	// are not; the returned instrument works (a no-op) either way.
	o.duration, _ = in.meter.Float64Histogram(MetricStoreDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of agentmem store operations."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.settlements, _ = in.meter.Int64Counter(MetricSettlements, metric.WithUnit("{receipt}"),
		metric.WithDescription("Pending operation receipts settled by the store."))
	for _, info := range []store.OperationInfo{
		{Op: store.OpRead}, {Op: store.OpListPaths}, {Op: store.OpWalk}, {Op: store.OpSearch},
		{Op: store.OpWrite, Create: true}, {Op: store.OpWrite}, {Op: store.OpDelete},
		{Op: store.OpGetOperation}, {Op: store.OpPruneExpired}, {Op: store.OpReadAndList},
		{Op: store.OpHistory}, {Op: store.OpReadVersion}, {Op: store.OpForgetHistory},
		{Op: store.OpIndex}, {Op: store.OpNamespaces},
	} {
		o.ops[info] = o.newOp(info)
	}
	return o
}

// genAIOperation is the GenAI memory operation of a store operation, or
// "" when none applies (receipt lookups and pruning).
func genAIOperation(info store.OperationInfo) (op string, search bool) {
	switch info.Op {
	case store.OpRead, store.OpListPaths, store.OpWalk, store.OpSearch, store.OpReadAndList:
		return "search_memory", true
	case store.OpWrite:
		if info.Create {
			return "create_memory", false
		}
		return "update_memory", false
	case store.OpDelete:
		return "delete_memory", false
	}
	return "", false
}

func (o *observer) newOp(info store.OperationInfo) *storeOp {
	op := &storeOp{name: "store." + string(info.Op)}
	attrs := []attribute.KeyValue{KeyStoreOperation.String(string(info.Op))}
	op.base = attrs
	var gen string
	gen, op.search = genAIOperation(info)
	if gen != "" {
		attrs = append(attrs, KeyGenAIOperation.String(gen))
	}
	if id := o.in.opts.StoreID; id != "" {
		attrs = append(attrs, KeyMemoryStoreID.String(id))
		op.base = append(op.base[:len(op.base):len(op.base)], KeyMemoryStoreID.String(id))
	}
	op.starts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	op.add = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(op.base...))}
	op.record = make(map[string][]metric.RecordOption, len(usualOutcomes))
	for _, outcome := range usualOutcomes {
		op.record[outcome] = op.recordOptions(outcome)
	}
	return op
}

// ObserveOperation implements store.Observer: it starts the operation's
// span and returns the function that ends it.
func (o *observer) ObserveOperation(ctx context.Context, info store.OperationInfo) (context.Context, func(store.OperationResult)) {
	op := o.ops[store.OperationInfo{Op: info.Op, Create: info.Create && info.Op == store.OpWrite}]
	if op == nil { // an operation added to the store since this module
		op = o.newOp(store.OperationInfo{Op: info.Op})
	}
	ctx, sp := o.in.tracer.Start(ctx, op.name, op.starts...)
	if !sp.IsRecording() && !o.duration.Enabled(ctx) && !o.in.replays.Enabled(ctx) && !o.in.conflicts.Enabled(ctx) {
		return ctx, ignore // nothing to record (no-op providers, a span not sampled)
	}
	began := time.Now()
	return ctx, func(r store.OperationResult) { o.end(ctx, op, sp, began, r) }
}

// ignore ends an operation that nothing records.
func ignore(store.OperationResult) {}

// end records the result of a store operation and ends its span.
func (o *observer) end(ctx context.Context, op *storeOp, sp trace.Span, began time.Time, r store.OperationResult) {
	elapsed := time.Since(began).Seconds()
	if sp.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 3)
		attrs = append(attrs, KeyStoreOutcome.String(r.Outcome))
		if op.search && r.Err == nil {
			attrs = append(attrs, KeyRecordCount.Int(r.Count))
		}
		if r.Err != nil && r.Outcome != "not_found" {
			attrs = append(attrs, KeyErrorType.String(r.Outcome))
			sp.SetStatus(codes.Error, r.Outcome)
		}
		sp.SetAttributes(attrs...)
	}
	sp.End()
	rec, ok := op.record[r.Outcome]
	if !ok {
		rec = op.recordOptions(r.Outcome)
	}
	o.duration.Record(ctx, elapsed, rec...)
	switch r.Outcome {
	case store.OutcomeReplayed:
		o.in.replays.Add(ctx, 1, op.add...)
	case "conflict", "operation_conflict":
		o.in.conflicts.Add(ctx, 1, op.add...)
	}
}

// recordOptions returns the histogram's attributes for an outcome.
func (op *storeOp) recordOptions(outcome string) []metric.RecordOption {
	attrs := append(op.base[:len(op.base):len(op.base)], KeyStoreOutcome.String(outcome))
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
}

// ObserveSettlement implements store.Observer: it counts the settlement
// and adds an event to the span of the operation that settled it.
func (o *observer) ObserveSettlement(ctx context.Context, s store.Settlement) {
	attr := KeySettlement.String(string(s))
	if id := o.in.opts.StoreID; id != "" {
		o.settlements.Add(ctx, 1, metric.WithAttributes(attr, KeyMemoryStoreID.String(id)))
	} else {
		o.settlements.Add(ctx, 1, metric.WithAttributes(attr))
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.AddEvent("agentmem.settlement", trace.WithAttributes(attr))
	}
}

// NewStore returns a store over d with everything instrumented, and the
// notebook tracer to give memory.Options.Tracer: d wrapped by
// [WrapDriver] (backend requests), [NewObserver] set as
// store.Options.Observer (store operations, settlements), [NewTracer]
// (tool calls), all sharing opts. Each tool call's span is then the parent
// of its store operations' spans, each the parent of its backend requests:
//
//	s, tracer := otel.NewStore(backend, &otel.Options{StoreID: "agent-memory"}, nil)
//	mem, _ := memory.New(s, &memory.Options{Tracer: tracer})
//
// storeOpts (nil = defaults) is copied; its Observer is replaced. With a
// nil d the store fails every call with store.ErrNoDriver, as store.New's
// does.
func NewStore(d driver.Driver, opts *Options, storeOpts *store.Options) (*store.Store, memory.Tracer) {
	in := newInstruments(opts)
	var so store.Options
	if storeOpts != nil {
		so = *storeOpts
	}
	so.Observer = newObserver(in)
	if d != nil {
		d = newWrapped(d, in)
	}
	return store.New(d, &so), &tracer{in: in}
}
