package memory

import "context"

// idKey is the type of this package's context keys.
type idKey int

const (
	userIDKey idKey = iota
	runIDKey
)

// WithUserID returns a copy of ctx that names the user whose notebook the
// calls made under it use, for the adapters that take the user from the
// context (eino, genkit): their [Invocation.Namespace] is id, escaped by
// [EscapeNamespace]. A nil ctx is taken as context.Background().
func WithUserID(ctx context.Context, id string) context.Context {
	return withValue(ctx, userIDKey, id)
}

// UserID returns the user id [WithUserID] put in ctx, or "" when there is
// none (or ctx is nil).
func UserID(ctx context.Context) string { return value(ctx, userIDKey) }

// WithRunID returns a copy of ctx whose tool calls carry run id id
// ([Invocation.RunID]), for the adapters that take it from the context
// (eino, genkit). Give a run that is repeated (resumed from a checkpoint,
// retried by a durable workflow) the id it had the first time, so that its
// replayed tool calls are applied once; without one, each run gets a
// random id. A nil ctx is taken as context.Background().
func WithRunID(ctx context.Context, id string) context.Context {
	return withValue(ctx, runIDKey, id)
}

// RunID returns the run id [WithRunID] put in ctx, or "" when there is
// none (or ctx is nil).
func RunID(ctx context.Context) string { return value(ctx, runIDKey) }

func withValue(ctx context.Context, k idKey, v string) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, k, v)
}

func value(ctx context.Context, k idKey) string {
	if ctx == nil {
		return ""
	}
	v, _ := ctx.Value(k).(string)
	return v
}
