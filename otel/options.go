package otel

import (
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every tracer and meter this
// package creates.
const ScopeName = "github.com/agentmem/agentmem/otel"

// Options configures the instrumentation. The zero value (or nil) means
// defaults.
type Options struct {
	// TracerProvider makes the spans; nil means the global provider
	// (go.opentelemetry.io/otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means the global provider.
	MeterProvider metric.MeterProvider
	// System is db.system.name on driver spans and metrics. "" means
	// detected from the driver's backend name (driver.Name): postgresql, sqlite, aws.dynamodb,
	// azure.cosmosdb, gcp.firestore, agentmem.memstore, agentmem.filestore,
	// else "other".
	System string
	// Collection is db.collection.name (the table, container or collection
	// the backend keeps files in); "" leaves it out.
	Collection string
	// StoreID is gen_ai.memory.store.id on notebook and store spans and
	// store metrics; "" leaves it out.
	StoreID string
	// RecordPaths adds the path or prefix of each driver call to its span
	// (agentmem.path). Paths name namespaces, so they may identify users:
	// off by default.
	RecordPaths bool
}

// Instrument returns d wrapped by [WrapDriver] and a notebook tracer
// ([NewTracer]) sharing opts: give the first to store.New and the second
// to memory.Options.Tracer.
//
// The wrapped driver forwards d's backend name ([driver.Name]), so the
// notebook's memory.backend attribute names d's backend, not the wrapper.
// Store operations get spans too with [NewStore], which does all three.
func Instrument(d driver.Driver, opts *Options) (driver.Driver, memory.Tracer) {
	in := newInstruments(opts)
	if d == nil {
		return nil, &tracer{in: in}
	}
	return newWrapped(d, in), &tracer{in: in}
}

// instruments is what one Options makes: a tracer, a meter's instruments
// and the settings.
type instruments struct {
	opts      Options
	tracer    trace.Tracer
	meter     metric.Meter
	duration  metric.Float64Histogram
	conflicts metric.Int64Counter
	replays   metric.Int64Counter
	pruned    metric.Int64Counter
}

// Metric names. The duration histogram is the stable database convention;
// the counters are agentmem's own.
const (
	// MetricDuration is the db.client.operation.duration histogram
	// (seconds) of backend requests.
	MetricDuration = "db.client.operation.duration"
	// MetricConflicts counts refusals: conditional backend writes refused
	// because their condition did not hold (with db.operation.name; this
	// includes the store's own fences and settlements, so it bounds the
	// conflicts callers see from above), and notebook tool calls that
	// ended in a conflict (with gen_ai.operation.name).
	MetricConflicts = "agentmem.conflicts"
	// MetricReplays counts mutations answered from an operation receipt
	// instead of being applied: notebook tool calls (with
	// gen_ai.operation.name) and atomic mutations (Mutate, with
	// db.operation.name). Replays on the primitive path show up only at the
	// notebook.
	MetricReplays = "agentmem.replays"
	// MetricPruned counts receipts and tombstones removed by
	// Store.PruneExpired on backends without a native TTL.
	MetricPruned = "agentmem.receipts.pruned"
)

// durationBuckets are the bucket boundaries the database conventions
// advise for db.client.operation.duration.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

func newInstruments(opts *Options) *instruments {
	in := &instruments{}
	if opts != nil {
		in.opts = *opts
	}
	tp, mp := in.opts.TracerProvider, in.opts.MeterProvider
	if tp == nil {
		tp = global.GetTracerProvider()
	}
	if mp == nil {
		mp = global.GetMeterProvider()
	}
	in.tracer = rooting{tp.Tracer(ScopeName)}
	m := mp.Meter(ScopeName)
	in.meter = m
	// Instrument errors only report invalid names or units, which these
	// are not; the returned instrument works (a no-op) either way.
	in.duration, _ = m.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of agentmem backend requests."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.conflicts, _ = m.Int64Counter(MetricConflicts, metric.WithUnit("{conflict}"),
		metric.WithDescription("Conditional writes refused, and notebook tool calls that ended in a conflict."))
	in.replays, _ = m.Int64Counter(MetricReplays, metric.WithUnit("{replay}"),
		metric.WithDescription("Mutations answered from an operation receipt instead of being applied."))
	in.pruned, _ = m.Int64Counter(MetricPruned, metric.WithUnit("{row}"),
		metric.WithDescription("Expired receipts and tombstones removed by a prune."))
	return in
}
