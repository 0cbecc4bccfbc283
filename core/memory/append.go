package memory

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/internal/canon"
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
	// Rotate, when non-nil, makes the append rotate: path is the first
	// file of a series ([SeriesPath]: pruned.md, pruned_0002.md, …), and
	// an append that would take the series' newest file past
	// MaxMemorySize goes to the next file instead of failing with
	// store.ErrTooLarge (only an entry longer than MaxMemorySize on its
	// own still does). With an OperationID the append lands exactly once
	// in the whole series: a retry or a concurrent delivery is answered
	// from the store's receipt wherever the original landed (Replayed),
	// also after that file filled up or was deleted. Each append records
	// [AppendedAtKey] in the file's metadata, and Rotate's retention runs
	// each time the series moves to a new file. Without a hint (see
	// [QueueOptions.Rotate]) the newest file is found by listing the
	// series: one more request per append.
	Rotate *RotateOptions
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
// already larger than MaxMemorySize, or would become so; with opts.Rotate only when the text
// alone is), [ErrRetention] with the landed append's Mutation (opts.Rotate's retention failed),
// or the backend's error.
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
	if isBlank(text) {
		return store.Mutation{}, nil
	}
	if o.Rotate != nil {
		return appendSeries(ctx, s, path, text, o, nil)
	}
	var op *store.Operation
	if o.OperationID != "" {
		op = &store.Operation{
			ID:          o.OperationID,
			Fingerprint: canon.Hash(map[string]any{"kind": "append", "path": path, "text": text}),
		}
	}
	return s.Append(ctx, store.AppendRequest{Path: path, Text: text, MaxChars: o.MaxMemorySize, Metadata: o.Metadata, Operation: op})
}
