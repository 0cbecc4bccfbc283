package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/agentmem/agentmem/core/internal/canon"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// MaxAttempts is how many compare-and-swap attempts a write or delete makes
// (one try and 15 retries), all with the same operation.
const MaxAttempts = 16

// Limits of search_memory queries, checked before the store is asked.
const (
	MaxQueryChars = 1000
	MaxQueryTerms = 32
)

// WriteResult is the result of write_memory. It never holds content.
type WriteResult struct {
	// File is the normalised file name.
	File string `json:"file"`
	// Version is the file's new version.
	Version string `json:"version"`
	// Replayed reports that this call was a replay of one already applied.
	Replayed bool `json:"replayed"`
	// Status is "created", "appended" or "updated".
	Status string `json:"status"`
}

// DeleteResult is the result of delete_memory. It never holds content.
type DeleteResult struct {
	// File is the normalised file name.
	File string `json:"file"`
	// Version is always null.
	Version *string `json:"version"`
	// Replayed reports that this call was a replay of one already applied.
	Replayed bool `json:"replayed"`
	// Status is "deleted", or "not_found" when there was nothing to delete.
	Status string `json:"status"`
}

// TruncatedMarker follows the content read_memory returns for a file
// longer than MaxMemorySize.
const TruncatedMarker = "\n\n[Truncated: this file is longer than the memory size limit; " +
	"shorten it in the backing store before editing it with write_memory.]"

// normalizeName turns the model's file argument into a file name (see
// notes.FileName), or the tool error that says how to name it.
func normalizeName(raw string) (string, *ToolError) {
	name, ok := notes.FileName(raw)
	if !ok {
		return "", toolErr(fmt.Sprintf("%q is not a valid memory filename: use a short name of letters, "+
			"digits, dots, dashes and underscores, without slashes, such as %q.", raw, "travel.md"))
	}
	return name, nil
}

// operation returns the idempotency key of one tool call.
func operation(sc scope, inv Invocation, kind, path string, args map[string]any) (*store.Operation, error) {
	if inv.ToolCallID == "" {
		return nil, fmt.Errorf("%w: stable tool_call_id missing", ErrMissingID)
	}
	if inv.RunID == "" {
		return nil, fmt.Errorf("%w: stable run_id missing", ErrMissingID)
	}
	return &store.Operation{
		ID:          canon.Hash(map[string]any{"scope": sc.path, "run_id": inv.RunID, "tool_call_id": inv.ToolCallID}),
		Fingerprint: canon.Hash(map[string]any{"kind": kind, "path": path, "model_args": args}),
	}, nil
}

// lookup returns the recorded result of op before a tool call reads the
// file, or nil. On a store with an atomic mutation it asks nothing: the
// mutation checks the receipt first and returns the original result of a
// replay itself, so a tool write costs the read and one request. A
// mistake found in what was read still asks (see refuse in doWrite),
// since the original call may have made it.
func (m *Memory) lookup(ctx context.Context, op *store.Operation) (*store.Mutation, error) {
	if m.s.Capabilities().AtomicMutation {
		return nil, nil
	}
	return m.s.GetOperation(ctx, *op)
}

// readFile reads path, returning nil when it does not exist.
func (m *Memory) readFile(ctx context.Context, path string, maxChars int) (*store.File, error) {
	return notes.Read(ctx, m.s, path, maxChars)
}

// mutationError maps a store error from a mutation to a tool result the
// model can act on, or passes it on.
func mutationError(name string, err error) (any, error) {
	switch {
	case errors.Is(err, store.ErrPathEscape):
		return toolErr(fmt.Sprintf("Memory file %q resolves outside the store directory; use another file name.", name)), nil
	case errors.Is(err, store.ErrTooLarge):
		return toolErr(fmt.Sprintf("Memory file %q is too large for the memory backend. Split the content into "+
			"separate memory files.", name)), nil
	}
	return nil, err
}

// checkWrite applies write_memory's argument rules that need no store: the
// file name (nil means MainFile) and non-blank content for an append. It
// returns the raw file argument and the normalised name.
func checkWrite(content, file, oldText *string) (rawFile, name string, te *ToolError) {
	rawFile = MainFile
	if file != nil {
		rawFile = *file
	}
	if name, te = normalizeName(rawFile); te != nil {
		return "", "", te
	}
	if oldText == nil && notes.IsBlank(*content) {
		return "", "", toolErr("Nothing to write: content is empty. Pass the text to remember, or old_text to edit.")
	}
	return rawFile, name, nil
}

func (m *Memory) write(ctx context.Context, inv Invocation, content, file, oldText, expires *string) (any, error) {
	rawFile, name, te := checkWrite(content, file, oldText)
	if te != nil {
		return te, nil
	}
	life, lifeErr := m.lifetimeArg(name, expires)
	sc, err := m.scopeOf(ctx, inv)
	if err != nil {
		if lifeErr != nil {
			return lifeErr, nil
		}
		return nil, err
	}
	path := sc.file(name)
	var old any
	if oldText != nil {
		old = *oldText
	}
	args := map[string]any{"content": *content, "file": rawFile, "old_text": old}
	if expires != nil {
		args["expires"] = *expires // a call without one keeps the fingerprint it always had
	}
	op, err := operation(sc, inv, "write", path, args)
	if err != nil {
		if lifeErr != nil {
			return lifeErr, nil
		}
		return nil, err
	}
	ctx, sp := m.startSpan(ctx, "memory.write", sc)
	res, outcome, err := m.doWrite(ctx, sp, sc, inv, name, *content, oldText, life, lifeErr, op)
	sp.end(outcome, res, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// doWrite makes the write of one write_memory call under op. lifeErr is
// the mistake in the call's expires argument, if any: an expiry that has
// passed since the original call landed (a retry of "until 18:00" after
// 18:00) still replays it, as any refusal does.
func (m *Memory) doWrite(ctx context.Context, sp *span, sc scope, inv Invocation, name, content string, oldText *string, life lifetimeChange, lifeErr *ToolError, op *store.Operation) (any, string, error) {
	path := sc.file(name)
	// A replay returns the original result, built from the operation's
	// receipt (never from a read, which may postdate the original).
	replayed := func(prev store.Mutation) (any, string, error) {
		status := "created"
		switch {
		case oldText != nil:
			status = "updated"
		case prev.Existed:
			status = "appended"
		}
		sp.set("memory.replayed", true)
		return &WriteResult{File: name, Version: prev.Version, Replayed: true, Status: status}, "replayed", nil
	}
	// refuse reports a mistake found in what was read, unless the original
	// call landed after the receipt check and before the read.
	refuse := func(msg string) (any, string, error) {
		if prev, err := m.s.GetOperation(ctx, *op); err != nil {
			return nil, "", err
		} else if prev != nil {
			return replayed(*prev)
		}
		return toolErr(msg), "", nil
	}
	if lifeErr != nil {
		return refuse(lifeErr.Message)
	}
	if prev, err := m.lookup(ctx, op); err != nil {
		return nil, "", err
	} else if prev != nil {
		return replayed(*prev)
	}
	meta, err := m.writeMetadata(ctx, inv)
	if err != nil {
		return nil, "", err
	}
	limit := m.limits.MaxMemorySize
	looked := false // for a case variant of name
	for attempt := 1; ; attempt++ {
		cur, err := m.readFile(ctx, path, limit)
		if err != nil {
			res, err := mutationError(name, err)
			return res, "", err
		}
		if cur != nil && cur.Truncated {
			return refuse(fmt.Sprintf("Memory file %q is larger than %d characters, so only partial content "+
				"could be read; nothing was written. It must be shortened in the backing store first.", name, limit))
		}
		if cur == nil && !looked {
			looked = true
			other, err := m.caseVariant(ctx, sc, name)
			if err != nil {
				res, err := mutationError(name, err)
				return res, "", err
			}
			if other != "" {
				return refuse(variantMsg(name, other, fmt.Sprintf("nothing was written: write to %q, or choose "+
					"a name of its own", other)))
			}
		}
		var curText *string
		if cur != nil {
			curText = &cur.Content
		}
		next, status, te := m.nextContent(name, curText, content, oldText)
		if te != nil {
			return refuse(te.Message)
		}
		expected := ""
		if cur != nil {
			expected = cur.Version
		}
		expires, pinned, msg := life.apply(name, cur)
		if msg != "" {
			return refuse(msg)
		}
		mu, err := m.s.Write(ctx, store.WriteRequest{Path: path, Content: next, Expected: expected, Operation: op, Metadata: meta,
			ExpiresAt: expires, Pinned: pinned})
		switch {
		case err == nil && mu.Replayed:
			return replayed(mu)
		case err == nil:
			sp.set("memory.chars", notes.Runes(next))
			sp.set("memory.replayed", false)
			return &WriteResult{File: name, Version: mu.Version, Status: status}, "ok", nil
		case !errors.Is(err, store.ErrConflict):
			res, err := mutationError(name, err)
			return res, "", err
		case attempt == MaxAttempts:
			return toolErr(fmt.Sprintf("Memory file %q changed repeatedly while it was being written; nothing "+
				"was written. Try the write again.", name)), "", nil
		}
		if err := notes.Backoff(ctx, attempt); err != nil {
			return nil, "", err
		}
	}
}

// nextContent is write_memory's edit of one file whose current content is
// cur (nil: absent): the new content and the status ("created",
// "appended" or "updated"), or the mistake that refuses it (no file to
// edit, old_text missing or ambiguous, the result over MaxMemorySize).
func (m *Memory) nextContent(name string, cur *string, content string, oldText *string) (next, status string, te *ToolError) {
	if oldText == nil {
		if cur != nil && !notes.IsBlank(*cur) {
			next = strings.TrimRightFunc(*cur, notes.IsSpace) + "\n" + strings.TrimRightFunc(content, notes.IsSpace) + "\n"
			status = "appended"
		} else {
			next = strings.TrimRightFunc(content, notes.IsSpace) + "\n"
			status = "created"
		}
	} else {
		if cur == nil {
			return "", "", toolErr(fmt.Sprintf("There is no memory file %q to edit. Omit old_text to create it.", name))
		}
		switch n := countNonOverlapping(*cur, *oldText); {
		case n == 0:
			return "", "", toolErr(fmt.Sprintf("old_text was not found in %q. Call %s(%q) and copy the exact passage.",
				name, m.names.read, name))
		case n > 1:
			return "", "", toolErr(fmt.Sprintf("old_text appears %d times in %q; it must match exactly once. "+
				"Include more surrounding text.", n, name))
		}
		next = strings.Replace(*cur, *oldText, content, 1)
		status = "updated"
	}
	if n, limit := notes.Runes(next), m.limits.MaxMemorySize; n > limit {
		return "", "", toolErr(fmt.Sprintf("Memory file %q would be %d characters, over the limit of %d. "+
			"Split the content into separate memory files.", name, n, limit))
	}
	return next, status, nil
}

// writeMetadata is the metadata of one write or delete: the notebook's,
// then the invocation's keys over it.
func (m *Memory) writeMetadata(ctx context.Context, inv Invocation) (map[string]string, error) {
	meta := m.meta
	if m.metaFunc != nil {
		var err error
		if meta, err = m.metaFunc(ctx); err != nil {
			return nil, err
		}
	}
	if len(inv.Metadata) == 0 {
		return meta, nil
	}
	out := make(map[string]string, len(meta)+len(inv.Metadata))
	maps.Copy(out, meta)
	maps.Copy(out, inv.Metadata)
	return out, nil
}

// countNonOverlapping counts non-overlapping occurrences of sub, left to
// right; an empty sub counts as 0.
func countNonOverlapping(s, sub string) int {
	if sub == "" {
		return 0
	}
	return strings.Count(s, sub)
}

func (m *Memory) read(ctx context.Context, inv Invocation, file string) (any, error) {
	name, te := normalizeName(file)
	if te != nil {
		return te, nil
	}
	sc, err := m.scopeOf(ctx, inv)
	if err != nil {
		return nil, err
	}
	ctx, sp := m.startSpan(ctx, "memory.read", sc)
	var res any
	f, err := m.readFile(ctx, sc.file(name), m.limits.MaxMemorySize)
	switch {
	case err != nil:
		res, err = mutationError(name, err)
	case f == nil:
		var other string
		if other, err = m.caseVariant(ctx, sc, name); err != nil {
			res, err = mutationError(name, err)
		} else if other != "" {
			res = toolErr(variantMsg(name, other, fmt.Sprintf("call %s(%q) to read it", m.names.read, other)))
		} else {
			res = toolErr(fmt.Sprintf("There is no memory file %q. Use %s to find files.", name, m.names.search))
		}
	default:
		sp.set("memory.chars", notes.Runes(f.Content))
		content := f.Content
		if f.Truncated {
			content += TruncatedMarker
		}
		res = content
	}
	sp.end("ok", res, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (m *Memory) delete(ctx context.Context, inv Invocation, file string) (any, error) {
	name, te := normalizeName(file)
	if te != nil {
		return te, nil
	}
	if name == MainFile {
		return toolErr(fmt.Sprintf("%s is the main notebook and cannot be deleted; correct or remove its text "+
			"with %s instead.", MainFile, m.names.write)), nil
	}
	sc, err := m.scopeOf(ctx, inv)
	if err != nil {
		return nil, err
	}
	path := sc.file(name)
	op, err := operation(sc, inv, "delete", path, map[string]any{"file": file})
	if err != nil {
		return nil, err
	}
	ctx, sp := m.startSpan(ctx, "memory.delete", sc)
	res, outcome, err := m.doDelete(ctx, sp, sc, inv, name, op)
	sp.end(outcome, res, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (m *Memory) doDelete(ctx context.Context, sp *span, sc scope, inv Invocation, name string, op *store.Operation) (any, string, error) {
	path := sc.file(name)
	result := func(mu store.Mutation) (any, string, error) {
		status := "not_found"
		if mu.Existed {
			status = "deleted"
		}
		sp.set("memory.replayed", mu.Replayed)
		outcome := status
		if mu.Replayed {
			outcome = "replayed"
		}
		return &DeleteResult{File: name, Replayed: mu.Replayed, Status: status}, outcome, nil
	}
	if prev, err := m.lookup(ctx, op); err != nil {
		return nil, "", err
	} else if prev != nil {
		return result(*prev)
	}
	meta, err := m.writeMetadata(ctx, inv)
	if err != nil {
		return nil, "", err
	}
	for attempt := 1; ; attempt++ {
		cur, err := m.readFile(ctx, path, 1)
		if err != nil {
			res, err := mutationError(name, err)
			return res, "", err
		}
		expected := ""
		if cur != nil {
			expected = cur.Version
		}
		mu, err := m.s.Delete(ctx, store.DeleteRequest{Path: path, Expected: expected, Operation: op, Metadata: meta})
		switch {
		case err == nil && !mu.Existed && !mu.Replayed:
			// Nothing was there: name a case variant if one exists. Looked
			// up after the delete, so a replay costs no listing.
			other, err := m.caseVariant(ctx, sc, name)
			if err != nil {
				res, err := mutationError(name, err)
				return res, "", err
			}
			if other != "" {
				return toolErr(variantMsg(name, other, fmt.Sprintf("nothing was deleted: call %s(%q) to delete it",
					m.names.delete, other))), "", nil
			}
			return result(mu)
		case err == nil:
			return result(mu)
		case !errors.Is(err, store.ErrConflict):
			res, err := mutationError(name, err)
			return res, "", err
		case attempt == MaxAttempts:
			return toolErr(fmt.Sprintf("Memory file %q changed repeatedly while it was being deleted; nothing "+
				"was deleted. Try the delete again.", name)), "", nil
		}
		if err := notes.Backoff(ctx, attempt); err != nil {
			return nil, "", err
		}
	}
}
