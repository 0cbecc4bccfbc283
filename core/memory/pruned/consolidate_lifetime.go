package pruned

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// A consolidation respects each file's lifetime (its expiry and pin, see
// store.WriteRequest): it shows the model which files are pinned or
// expiring, lets it give a file an expiry through the same validated
// edits (memory.Edit.Expires), and never deletes or empties a pinned
// file: it has no delete, and an edit that would replace or remove a
// pinned file's text is refused, when the plan is validated and again
// just before it is written. Every edit is a write_memory call, which
// keeps the file's expiry and pin unless the edit names an expiry.

// pinnedEdit is the reason an edit of the pinned file name is refused:
// consolidation only appends to a pinned file, so it never empties one.
func pinnedEdit(name string) string {
	return fmt.Sprintf("%s is pinned: consolidation never replaces or removes a pinned file's text. Append to it "+
		"instead (old_text null), or write the fact to another file.", name)
}

// checkLifetime returns why edit e, on a file pinned or not, is refused
// for the file's lifetime, or "": a pinned file is only appended to and
// never expires; MEMORY.md never expires; an expiry must parse and lie in
// the future by the store's clock.
func (c *consolidation) checkLifetime(e memory.Edit, pinned bool) string {
	if pinned && e.OldText != nil {
		return pinnedEdit(e.File)
	}
	if e.Expires == nil {
		return ""
	}
	at, err := memory.ParseExpiry(*e.Expires, c.m.Store().Now())
	switch {
	case err != nil:
		return "invalid expires: " + strings.TrimPrefix(err.Error(), store.ErrInvalidLifetime.Error()+": ") + "."
	case at.IsZero():
		return ""
	case e.File == memory.MainFile:
		return memory.MainFile + " never expires: put what stops being true in a file of its own (trip.md, " +
			"say) and give that file the expiry."
	case pinned:
		return e.File + " is pinned, so it never expires: leave expires null for it."
	}
	return ""
}

// pinnedNow reports why the edit e may not be written now because its
// file is pinned, or "": the check of checkLifetime, again just before
// the write, since a file may be pinned after the plan was made. Only a
// replacement needs it (and its one read): an append never removes text,
// and write_memory itself refuses an expiry for a pinned file.
func (c *consolidation) pinnedNow(ctx context.Context, e memory.Edit) (string, error) {
	if e.OldText == nil {
		return "", nil
	}
	f, err := notes.Read(ctx, c.m.Store(), c.file(e.File), 1)
	if err != nil || f == nil || !f.Pinned {
		return "", err
	}
	return pinnedEdit(e.File), nil
}
