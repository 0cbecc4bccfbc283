// Package otel instruments agentmem with OpenTelemetry: CLIENT spans and a
// duration histogram for every backend request (a driver wrapper following
// the stable database semantic conventions), INTERNAL spans for every store
// operation and for the notebook's tools following the GenAI memory
// conventions (a [store.Observer] and a [memory.Tracer]), and counters for
// conflicts, replays, settlements of pending receipts and pruned receipts.
//
//	s, tracer := otel.NewStore(backend, nil, nil) // global providers, default store options
//	mem, _ := memory.New(s, &memory.Options{Tracer: tracer})
//
// A tool call's span is the parent of its store operations' spans, each
// the parent of the backend requests it makes. [WrapDriver], [NewObserver]
// and [NewTracer] make each level alone; [Instrument] the first and the
// last.
//
// # Content
//
// Nothing recorded by default carries memory content, search queries,
// paths, namespaces or operation ids: driver spans name the primitive, the
// system and the configured collection; store spans carry the operation and
// its outcome (the store tells its observer nothing else); notebook spans
// carry the notebook's content-free attributes (sizes, counts, outcomes, a hash of the
// scope). [Options.RecordPaths] adds paths and prefixes to driver spans.
// Error descriptions are error kinds ([store.ErrorKind]), never error text,
// which may name a path.
//
// # Versions
//
// The module requires go.opentelemetry.io/otel v1.45.0, the version the
// agentmem workspace selects: v1.47.0 requires go.opentelemetry.io/otel/log
// v1.47.0, which Google ADK Go v2.2.0's telemetry does not compile with. A
// program may select any later version.
package otel
