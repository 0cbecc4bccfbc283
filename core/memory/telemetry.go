package memory

import "context"

// Tracer starts spans; bridge it to OpenTelemetry or your own tracing.
//
// Span names are memory.inject, memory.write, memory.read, memory.delete
// and memory.search. Attributes (set once, before End) never carry memory
// content, namespaces or file names:
//
//   - all: memory.backend (the backend's name, [store.Store.Backend]), memory.scope_hash (16 hex
//     chars of SHA-256 of the scope), memory.outcome (ok, replayed,
//     deleted, not_found, budget_exhausted or error);
//   - on error: memory.exception_type (ToolError, Conflict,
//     OperationConflict, BackendError, ...);
//   - write: memory.chars, memory.replayed; read: memory.chars; delete:
//     memory.replayed; search: memory.matches, memory.scanned,
//     memory.chars, memory.truncated; inject: memory.main_chars,
//     memory.files, memory.files_truncated, memory.main_truncated,
//     memory.injected_chars.
type Tracer interface {
	Start(ctx context.Context, name string) (context.Context, Span)
}

// Span is one started span.
type Span interface {
	// SetAttributes records attributes; values are string, int or bool.
	SetAttributes(attrs ...Attribute)
	// End ends the span.
	End()
}

// Attribute is one span attribute.
type Attribute struct {
	// Key is the attribute name, such as "memory.outcome".
	Key string
	// Value is a string, int, bool or float64; never memory content.
	Value any
}

// span accumulates attributes and hands them to the tracer's span at end.
type span struct {
	s     Span
	attrs []Attribute
}

func (m *Memory) startSpan(ctx context.Context, name string, sc scope) (context.Context, *span) {
	if m.tracer == nil {
		return ctx, &span{}
	}
	ctx, s := m.tracer.Start(ctx, name)
	sp := &span{s: s}
	sp.set("memory.backend", m.backend)
	sp.set("memory.scope_hash", sc.hash())
	return ctx, sp
}

// traced reports whether attributes are recorded, so that a costly one
// (a count over a whole file) is computed only then.
func (sp *span) traced() bool { return sp.s != nil }

func (sp *span) set(key string, value any) {
	if sp.s != nil {
		sp.attrs = append(sp.attrs, Attribute{Key: key, Value: value})
	}
}

// end records the outcome: err (a Go error) or a *ToolError result wins
// over outcome.
func (sp *span) end(outcome string, result any, err error) {
	if sp.s == nil {
		return
	}
	switch te, _ := result.(*ToolError); {
	case err != nil:
		sp.set("memory.outcome", "error")
		sp.set("memory.exception_type", errorType(err))
	case te != nil:
		sp.set("memory.outcome", "error")
		sp.set("memory.exception_type", "ToolError")
	default:
		sp.set("memory.outcome", outcome)
	}
	sp.s.SetAttributes(sp.attrs...)
	sp.s.End()
}
