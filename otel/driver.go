package otel

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of driver spans and metrics (stable database semantic
// conventions, plus agentmem.path).
const (
	// KeyDBSystem names the backend (Options.System, or detected).
	KeyDBSystem = attribute.Key("db.system.name")
	// KeyDBOperation is the driver primitive (GetFile, Mutate, …).
	KeyDBOperation = attribute.Key("db.operation.name")
	// KeyDBCollection is Options.Collection.
	KeyDBCollection = attribute.Key("db.collection.name")
	// KeyDBBatchSize is the number of paths of a GetFiles call.
	KeyDBBatchSize = attribute.Key("db.operation.batch.size")
	// KeyErrorType is the kind of a failure (store.ErrorKind on driver
	// spans, the notebook's exception type on notebook spans).
	KeyErrorType = attribute.Key("error.type")
	// KeyPath is the path or prefix of a driver call, recorded only with
	// Options.RecordPaths.
	KeyPath = attribute.Key("agentmem.path")
)

// The driver calls, in the order of the names below.
const (
	opGetFile = iota
	opListFiles
	opCreateFile
	opReplaceFile
	opDeleteFile
	opGetReceipt
	opReserveReceipt
	opCompleteReceipt
	opDropReceipt
	opMutate
	opGetFiles
	opReadScope
	opPruneExpired
	opReadSnapshot
	opAppend
	opPutHistory
	opCompleteHistory
	opDropHistory
	opGetHistory
	opListHistory
	opDeleteHistory
	numOps
)

// opNames are the db.operation.name values: the driver primitives.
var opNames = [numOps]string{"GetFile", "ListFiles", "CreateFile", "ReplaceFile", "DeleteFile",
	"GetReceipt", "ReserveReceipt", "CompleteReceipt", "DropReceipt",
	"Mutate", "GetFiles", "ReadScope", "PruneExpired", "ReadSnapshot", "Append",
	"PutHistory", "CompleteHistory", "DropHistory", "GetHistory", "ListHistory", "DeleteHistory"}

// conditional reports the calls whose ErrPrecondition is a refused write
// of a file (counted as a conflict).
func conditional(op int) bool {
	return op == opCreateFile || op == opReplaceFile || op == opDeleteFile || op == opMutate
}

// wrapped is the instrumented driver: every primitive, every optional
// interface, Close and the capability report. It reports the inner
// driver's capabilities through driver.CapabilityReporter, so the store
// uses a fast path only when the inner driver has it.
type wrapped struct {
	inner driver.Driver
	caps  driver.Capabilities
	in    *instruments
	// Per call, computed once: span name, start options, metric attributes.
	names  [numOps]string
	starts [numOps][]trace.SpanStartOption
	attrs  [numOps][]attribute.KeyValue
	record [numOps][]metric.RecordOption // passed whole: no allocation per call
	add    [numOps][]metric.AddOption
}

var (
	_ driver.Driver             = (*wrapped)(nil)
	_ driver.Mutator            = (*wrapped)(nil)
	_ driver.CollisionChecker   = (*wrapped)(nil)
	_ driver.Appender           = (*wrapped)(nil)
	_ driver.BatchGetter        = (*wrapped)(nil)
	_ driver.ScopeReader        = (*wrapped)(nil)
	_ driver.SnapshotReader     = (*wrapped)(nil)
	_ driver.Pruner             = (*wrapped)(nil)
	_ driver.Historian          = (*wrapped)(nil)
	_ driver.CapabilityReporter = (*wrapped)(nil)
	_ driver.Namer              = (*wrapped)(nil)
)

// WrapDriver returns d instrumented: one CLIENT span per driver call, named
// "{db.operation.name} {db.collection.name or db.system.name}", with
// db.system.name, db.operation.name (the primitive: GetFile, Mutate, …),
// db.collection.name when Options.Collection is set,
// db.operation.batch.size for GetFiles, and on failure error.type (the
// error's kind, [store.ErrorKind]: "precondition_failed", "too_large", …,
// else the Go type) with an Error status; the db.client.operation.duration
// histogram; the conflict, replay and prune counters.
//
// The result implements every optional interface of package driver and
// reports, through driver.CapabilityReporter, those the store would use on
// d ([driver.CapabilitiesOf]), so the store takes the same fast paths as
// on d. A nil d returns nil.
func WrapDriver(d driver.Driver, opts *Options) driver.Driver {
	if d == nil {
		return nil
	}
	return newWrapped(d, newInstruments(opts))
}

func newWrapped(d driver.Driver, in *instruments) *wrapped {
	w := &wrapped{inner: d, caps: driver.CapabilitiesOf(d), in: in}
	system := in.opts.System
	if system == "" {
		system = detectSystem(d)
	}
	target := system
	base := []attribute.KeyValue{KeyDBSystem.String(system)}
	if c := in.opts.Collection; c != "" {
		target = c
		base = append(base, KeyDBCollection.String(c))
	}
	for op, name := range opNames {
		attrs := append(base[:len(base):len(base)], KeyDBOperation.String(name))
		w.names[op] = name + " " + target
		w.attrs[op] = attrs
		w.starts[op] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		w.record[op], w.add[op] = []metric.RecordOption{set}, []metric.AddOption{set}
	}
	return w
}

// systems maps a driver's package name to db.system.name.
var systems = map[string]string{
	"postgres":  "postgresql",
	"sqlite":    "sqlite",
	"dynamodb":  "aws.dynamodb",
	"cosmosdb":  "azure.cosmosdb",
	"firestore": "gcp.firestore",
	"memstore":  "agentmem.memstore",
	"filestore": "agentmem.filestore",
}

// detectSystem names the backend under d from its name ([driver.Name],
// which wrappers forward; for a driver without one, the package of its
// type).
func detectSystem(d driver.Driver) string {
	name, _, _ := strings.Cut(driver.Name(d), ".")
	if s, ok := systems[name]; ok {
		return s
	}
	return "other"
}

// start starts the span of call op; path is its path or prefix ("" for
// none).
func (w *wrapped) start(ctx context.Context, op int, path string) (context.Context, trace.Span, time.Time) {
	ctx, sp := w.in.tracer.Start(ctx, w.names[op], w.starts[op]...)
	if path != "" && w.in.opts.RecordPaths && sp.IsRecording() {
		sp.SetAttributes(KeyPath.String(path))
	}
	return ctx, sp, time.Now()
}

// end records the outcome of call op and ends its span.
func (w *wrapped) end(ctx context.Context, op int, sp trace.Span, began time.Time, err error) {
	elapsed := time.Since(began).Seconds()
	if err == nil {
		w.in.duration.Record(ctx, elapsed, w.record[op]...)
		sp.End()
		return
	}
	kind := store.ErrorKind(err)
	if errors.Is(err, driver.ErrPrecondition) && conditional(op) {
		w.in.conflicts.Add(ctx, 1, w.add[op]...)
	}
	attrs := append(w.attrs[op][:len(w.attrs[op]):len(w.attrs[op])], KeyErrorType.String(kind))
	w.in.duration.Record(ctx, elapsed, metric.WithAttributes(attrs...))
	sp.SetAttributes(KeyErrorType.String(kind))
	sp.SetStatus(codes.Error, kind)
	sp.End()
}

// Inner returns the wrapped driver.
func (w *wrapped) Inner() driver.Driver { return w.inner }

// Name implements driver.Namer: the inner driver's backend name.
func (w *wrapped) Name() string { return driver.Name(w.inner) }

// DriverCapabilities implements driver.CapabilityReporter: the inner
// driver's capabilities.
func (w *wrapped) DriverCapabilities() driver.Capabilities { return w.caps }

// GetFile implements driver.Driver.
func (w *wrapped) GetFile(ctx context.Context, path string) (*driver.File, error) {
	ctx, sp, began := w.start(ctx, opGetFile, path)
	v, err := w.inner.GetFile(ctx, path)
	w.end(ctx, opGetFile, sp, began, err)
	return v, err
}

// ListFiles implements driver.Driver.
func (w *wrapped) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	ctx, sp, began := w.start(ctx, opListFiles, p.Prefix)
	v, err := w.inner.ListFiles(ctx, p)
	w.end(ctx, opListFiles, sp, began, err)
	return v, err
}

// CreateFile implements driver.Driver.
func (w *wrapped) CreateFile(ctx context.Context, f driver.File) error {
	ctx, sp, began := w.start(ctx, opCreateFile, f.Path)
	err := w.inner.CreateFile(ctx, f)
	w.end(ctx, opCreateFile, sp, began, err)
	return err
}

// ReplaceFile implements driver.Driver.
func (w *wrapped) ReplaceFile(ctx context.Context, f driver.File, expected string) error {
	ctx, sp, began := w.start(ctx, opReplaceFile, f.Path)
	err := w.inner.ReplaceFile(ctx, f, expected)
	w.end(ctx, opReplaceFile, sp, began, err)
	return err
}

// DeleteFile implements driver.Driver.
func (w *wrapped) DeleteFile(ctx context.Context, path, expected string) error {
	ctx, sp, began := w.start(ctx, opDeleteFile, path)
	err := w.inner.DeleteFile(ctx, path, expected)
	w.end(ctx, opDeleteFile, sp, began, err)
	return err
}

// GetReceipt implements driver.Driver.
func (w *wrapped) GetReceipt(ctx context.Context, id string) (*driver.Receipt, error) {
	ctx, sp, began := w.start(ctx, opGetReceipt, "")
	v, err := w.inner.GetReceipt(ctx, id)
	w.end(ctx, opGetReceipt, sp, began, err)
	return v, err
}

// ReserveReceipt implements driver.Driver.
func (w *wrapped) ReserveReceipt(ctx context.Context, r driver.Receipt) error {
	ctx, sp, began := w.start(ctx, opReserveReceipt, r.Path)
	err := w.inner.ReserveReceipt(ctx, r)
	w.end(ctx, opReserveReceipt, sp, began, err)
	return err
}

// CompleteReceipt implements driver.Driver.
func (w *wrapped) CompleteReceipt(ctx context.Context, r driver.Receipt) error {
	ctx, sp, began := w.start(ctx, opCompleteReceipt, r.Path)
	err := w.inner.CompleteReceipt(ctx, r)
	w.end(ctx, opCompleteReceipt, sp, began, err)
	return err
}

// DropReceipt implements driver.Driver.
func (w *wrapped) DropReceipt(ctx context.Context, id, version string) error {
	ctx, sp, began := w.start(ctx, opDropReceipt, "")
	err := w.inner.DropReceipt(ctx, id, version)
	w.end(ctx, opDropReceipt, sp, began, err)
	return err
}

// ChecksCollisions implements driver.CollisionChecker: true when the inner
// driver's Mutate checks a create's file/folder collisions itself.
func (w *wrapped) ChecksCollisions() bool { return w.caps.AtomicCollision }

// ReadSnapshot implements driver.SnapshotReader with one span. The store
// calls it only when the inner driver has it (DriverCapabilities reports
// Snapshot); otherwise it reads the file and the listing one after the other.
func (w *wrapped) ReadSnapshot(ctx context.Context, p driver.SnapshotParams) (*driver.File, []driver.Entry, error) {
	ctx, sp, began := w.start(ctx, opReadSnapshot, p.Path)
	var f *driver.File
	var entries []driver.Entry
	var err error
	if r, ok := w.inner.(driver.SnapshotReader); ok && w.caps.Snapshot {
		f, entries, err = r.ReadSnapshot(ctx, p)
	} else if f, err = w.inner.GetFile(ctx, p.Path); err == nil {
		entries, err = w.inner.ListFiles(ctx, p.List)
	}
	w.end(ctx, opReadSnapshot, sp, began, err)
	return f, entries, err
}

// Append implements driver.Appender with one span; an answer from an
// existing receipt counts as a replay. The store calls it only when the
// inner driver is an Appender (DriverCapabilities reports Append).
func (w *wrapped) Append(ctx context.Context, p driver.AppendParams) (driver.AppendResult, error) {
	a, ok := w.inner.(driver.Appender)
	if !ok || !w.caps.Append {
		return driver.AppendResult{}, errors.New("otel: the wrapped driver is no driver.Appender")
	}
	ctx, sp, began := w.start(ctx, opAppend, p.Path)
	res, err := a.Append(ctx, p)
	w.end(ctx, opAppend, sp, began, err)
	if err == nil && res.Existing != nil {
		w.in.replays.Add(ctx, 1, w.add[opAppend]...)
	}
	return res, err
}

// historian returns the inner driver's Historian.
func (w *wrapped) historian() (driver.Historian, error) {
	h, ok := w.inner.(driver.Historian)
	if !ok || !w.caps.History {
		return nil, errors.New("otel: the wrapped driver is no driver.Historian")
	}
	return h, nil
}

// history runs one Historian call of w's inner driver in a span.
func history[T any](w *wrapped, ctx context.Context, op int, path string, call func(context.Context, driver.Historian) (T, error)) (T, error) {
	h, err := w.historian()
	if err != nil {
		var zero T
		return zero, err
	}
	ctx, sp, began := w.start(ctx, op, path)
	v, err := call(ctx, h)
	w.end(ctx, op, sp, began, err)
	return v, err
}

// PutHistory implements driver.Historian with one span. The store calls
// the Historian methods only when the inner driver has them
// (DriverCapabilities reports History).
func (w *wrapped) PutHistory(ctx context.Context, e driver.HistoryEntry) error {
	_, err := history(w, ctx, opPutHistory, e.Path, func(ctx context.Context, h driver.Historian) (struct{}, error) {
		return struct{}{}, h.PutHistory(ctx, e)
	})
	return err
}

// CompleteHistory implements driver.Historian with one span.
func (w *wrapped) CompleteHistory(ctx context.Context, path, version string) error {
	_, err := history(w, ctx, opCompleteHistory, path, func(ctx context.Context, h driver.Historian) (struct{}, error) {
		return struct{}{}, h.CompleteHistory(ctx, path, version)
	})
	return err
}

// DropHistory implements driver.Historian with one span.
func (w *wrapped) DropHistory(ctx context.Context, path, version string) error {
	_, err := history(w, ctx, opDropHistory, path, func(ctx context.Context, h driver.Historian) (struct{}, error) {
		return struct{}{}, h.DropHistory(ctx, path, version)
	})
	return err
}

// GetHistory implements driver.Historian with one span.
func (w *wrapped) GetHistory(ctx context.Context, path, version string) (*driver.HistoryEntry, error) {
	return history(w, ctx, opGetHistory, path, func(ctx context.Context, h driver.Historian) (*driver.HistoryEntry, error) {
		return h.GetHistory(ctx, path, version)
	})
}

// ListHistory implements driver.Historian with one span.
func (w *wrapped) ListHistory(ctx context.Context, p driver.HistoryParams) ([]driver.HistoryEntry, error) {
	return history(w, ctx, opListHistory, p.Prefix, func(ctx context.Context, h driver.Historian) ([]driver.HistoryEntry, error) {
		return h.ListHistory(ctx, p)
	})
}

// DeleteHistory implements driver.Historian with one span.
func (w *wrapped) DeleteHistory(ctx context.Context, prefix string) (int, error) {
	return history(w, ctx, opDeleteHistory, prefix, func(ctx context.Context, h driver.Historian) (int, error) {
		return h.DeleteHistory(ctx, prefix)
	})
}

// Close implements driver.Driver. It is not traced.
func (w *wrapped) Close() error { return w.inner.Close() }

// Mutate implements driver.Mutator; an answer from an existing receipt
// counts as a replay. The store calls it only when the inner driver is a
// Mutator (DriverCapabilities reports AtomicMutation).
func (w *wrapped) Mutate(ctx context.Context, p driver.MutateParams) (driver.MutateResult, error) {
	m, ok := w.inner.(driver.Mutator)
	if !ok || !w.caps.AtomicMutation {
		return driver.MutateResult{}, errors.New("otel: the wrapped driver is no driver.Mutator")
	}
	ctx, sp, began := w.start(ctx, opMutate, p.Path)
	res, err := m.Mutate(ctx, p)
	w.end(ctx, opMutate, sp, began, err)
	if err == nil && res.Existing != nil {
		w.in.replays.Add(ctx, 1, w.add[opMutate]...)
	}
	return res, err
}

// GetFiles implements driver.BatchGetter; the span carries
// db.operation.batch.size. The store calls it only when the inner driver
// is a BatchGetter (DriverCapabilities reports BatchGet).
func (w *wrapped) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	b, ok := w.inner.(driver.BatchGetter)
	if !ok || !w.caps.BatchGet {
		return nil, errors.New("otel: the wrapped driver is no driver.BatchGetter")
	}
	ctx, sp, began := w.start(ctx, opGetFiles, "")
	sp.SetAttributes(KeyDBBatchSize.Int(len(paths)))
	files, err := b.GetFiles(ctx, paths)
	w.end(ctx, opGetFiles, sp, began, err)
	return files, err
}

// ReadScope implements driver.ScopeReader. The store calls it only when
// the inner driver is a ScopeReader (DriverCapabilities reports ScopeRead).
func (w *wrapped) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	r, ok := w.inner.(driver.ScopeReader)
	if !ok || !w.caps.ScopeRead {
		return nil, errors.New("otel: the wrapped driver is no driver.ScopeReader")
	}
	ctx, sp, began := w.start(ctx, opReadScope, p.Prefix)
	files, err := r.ReadScope(ctx, p)
	w.end(ctx, opReadScope, sp, began, err)
	return files, err
}

// PruneExpired implements driver.Pruner; the rows removed are counted.
// The store calls it only when the inner driver is a Pruner
// (DriverCapabilities reports Prune).
func (w *wrapped) PruneExpired(ctx context.Context, now time.Time) (int, error) {
	p, ok := w.inner.(driver.Pruner)
	if !ok || !w.caps.Prune {
		return 0, errors.New("otel: the wrapped driver is no driver.Pruner")
	}
	ctx, sp, began := w.start(ctx, opPruneExpired, "")
	n, err := p.PruneExpired(ctx, now)
	w.end(ctx, opPruneExpired, sp, began, err)
	if n > 0 {
		w.in.pruned.Add(ctx, int64(n), w.add[opPruneExpired]...)
	}
	return n, err
}
