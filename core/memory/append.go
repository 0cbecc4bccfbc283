package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
}

// Append adds text to the memory file at path, a full store path such as
// "kamal/main/pruned.md", for jobs that feed memory outside the model's
// tool calls (a pruning hook, an import, a nightly summary). The file then
// shows in the injected file list and is reachable with read_memory and
// search_memory.
//
// It appends exactly as write_memory does (trailing whitespace trimmed,
// one newline between entries, one at the end), through a compare-and-swap
// loop of up to [MaxAttempts] attempts with a small random backoff, so it
// coexists with the model's own writes and other jobs; nothing is ever
// overwritten. Blank text writes nothing and returns a zero Mutation.
//
// Retrying Append without opts.OperationID can append the text twice: an
// error (a timeout, a lost reply) does not say that nothing was written.
// Give every append a stable OperationID whenever the job may retry or
// run again.
//
// Errors: store.ErrInvalidPath, store.ErrOperationConflict, store.ErrConflict
// (the file kept changing for every attempt), store.ErrTooLarge (the file is
// already larger than MaxMemorySize, or would become so), or the backend's
// error.
func Append(ctx context.Context, s *store.Store, path, text string, opts *AppendOptions) (store.Mutation, error) {
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
	var op *store.Operation
	if o.OperationID != "" {
		op = &store.Operation{
			ID:          o.OperationID,
			Fingerprint: canon.Hash(map[string]any{"kind": "append", "path": path, "text": text}),
		}
		if !s.Capabilities().AtomicMutation {
			// On an atomic store the write's own receipt check answers a
			// replay; here a lookup first spares the primitive path's
			// reservation.
			if prev, err := s.GetOperation(ctx, *op); err != nil || prev != nil {
				if prev == nil {
					return store.Mutation{}, err
				}
				return *prev, nil
			}
		}
	}
	// refuse reports a mistake found in what was read, unless the
	// operation already landed (on an atomic store no lookup came first).
	refuse := func(err error) (store.Mutation, error) {
		if op != nil && s.Capabilities().AtomicMutation {
			if prev, gerr := s.GetOperation(ctx, *op); gerr != nil || prev != nil {
				if prev == nil {
					return store.Mutation{}, gerr
				}
				return *prev, nil
			}
		}
		return store.Mutation{}, err
	}
	entry := strings.TrimRightFunc(text, isSpace) + "\n"
	var err error
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := backoff(ctx, attempt-1); err != nil {
				return store.Mutation{}, err
			}
		}
		f, rerr := s.Read(ctx, path, o.MaxMemorySize)
		expected, next := "", entry
		switch {
		case rerr == nil:
			if f.Truncated {
				return refuse(fmt.Errorf("memory: append: file is over %d characters: %w", o.MaxMemorySize, store.ErrTooLarge))
			}
			expected = f.Version
			if !isBlank(f.Content) {
				next = strings.TrimRightFunc(f.Content, isSpace) + "\n" + entry
			}
		case !errors.Is(rerr, store.ErrNotFound):
			return store.Mutation{}, rerr
		}
		if n := runes(next); n > o.MaxMemorySize {
			return refuse(fmt.Errorf("memory: append: file would be %d characters, over %d: %w", n, o.MaxMemorySize, store.ErrTooLarge))
		}
		var mu store.Mutation
		mu, err = s.Write(ctx, store.WriteRequest{Path: path, Content: next, Expected: expected, Operation: op, Metadata: o.Metadata})
		if !errors.Is(err, store.ErrConflict) {
			return mu, err
		}
	}
	return store.Mutation{}, fmt.Errorf("memory: append: the file changed on each of %d attempts: %w", MaxAttempts, err)
}
