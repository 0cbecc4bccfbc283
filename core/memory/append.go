package memory

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memory/internal/notes"

	"github.com/agentmem/agentmem/core/store"
)

// AppendOptions configures [Append]. The zero value (or nil) means
// defaults.
type AppendOptions struct {
	// OperationID makes the append idempotent: a retried or replayed
	// Append with the same id and the same path and text writes nothing
	// and returns the original result with Replayed set. Reusing the id
	// with another path or text is store.ErrOperationConflict. Use an id
	// stable across retries of the job, such as "prune/<run id>/<step>".
	//
	// Without an OperationID, Append is NOT idempotent: every call that
	// returns an error may still have appended (a lost reply, a timeout),
	// and calling it again appends the text a second time. Jobs that retry
	// must set one.
	OperationID string
	// MaxMemorySize bounds the resulting file, in characters, as the
	// notebook's Limits.MaxMemorySize does. Default 65,536.
	MaxMemorySize int
	// Metadata is stored with the new content (see store.WriteRequest).
	Metadata map[string]string
}

// Append adds text to the memory file at path, a full store path such as
// "kamal/main/pruned.md", for jobs that feed memory outside the model's
// tool calls (a pruning hook, an import, a nightly summary). The file then
// shows in the injected file list and is reachable with read_memory and
// search_memory.
//
// It appends exactly as write_memory does (trailing whitespace trimmed,
// one newline between entries, one at the end) with [store.Store.Append],
// so it coexists with the model's own writes and other jobs; nothing is
// ever overwritten. On a backend with an atomic append (memstore,
// filestore, sqlite, postgres) it cannot conflict; elsewhere it retries
// its compare-and-swap with a backoff that grows with contention, until it
// succeeds or ctx ends: give ctx a deadline to bound it. Blank text writes
// nothing and returns a zero Mutation.
//
// Retrying Append without opts.OperationID can append the text twice: an
// error (a timeout, a lost reply) does not say that nothing was written.
// Give every append a stable OperationID whenever the job may retry or
// run again.
//
// Errors: store.ErrNoDriver (s is nil), store.ErrInvalidPath, store.ErrOperationConflict, store.ErrConflict
// with ctx's error (the file kept changing until ctx ended), store.ErrTooLarge (the file is
// already larger than MaxMemorySize, or would become so), or the backend's error. A file that
// must never fail for size is a series: pruned.AppendSeries rotates to the next file instead.
func Append(ctx context.Context, s *store.Store, path, text string, opts *AppendOptions) (store.Mutation, error) {
	if s == nil {
		return store.Mutation{}, fmt.Errorf("memory: Append needs a store, got nil: %w", store.ErrNoDriver)
	}
	var o AppendOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxMemorySize <= 0 {
		o.MaxMemorySize = DefaultMaxMemorySize
	}
	if err := store.ValidatePath(path); err != nil {
		return store.Mutation{}, err
	}
	if notes.IsBlank(text) {
		return store.Mutation{}, nil
	}
	return s.Append(ctx, store.AppendRequest{Path: path, Text: text, MaxChars: o.MaxMemorySize, Metadata: o.Metadata,
		Operation: notes.AppendOperation(o.OperationID, path, text)})
}
