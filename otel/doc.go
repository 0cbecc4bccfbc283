// Package otel instruments agentmem with OpenTelemetry: CLIENT spans and a
// duration histogram for every backend request (a driver wrapper following
// the stable database semantic conventions), spans for the notebook's tools
// following the GenAI memory conventions (a [memory.Tracer] bridge), and
// counters for conflicts, replays and pruned receipts.
//
//	d, tracer := otel.Instrument(backend, nil) // global providers
//	s := store.New(d, nil)
//	mem, _ := memory.New(s, &memory.Options{Tracer: tracer})
//
// A tool call's span is the parent of the backend requests it makes.
//
// # Content
//
// Nothing recorded by default carries memory content, search queries,
// paths, namespaces or operation ids: driver spans name the primitive, the
// system and the configured collection; notebook spans carry the
// notebook's content-free attributes (sizes, counts, outcomes, a hash of the
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
