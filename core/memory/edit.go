package memory

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentmem/agentmem/core/memory/internal/notes"
)

// Edit is one write_memory call's arguments, for code that plans changes
// to a notebook before making them (package pruned's consolidation). With
// OldText nil, Content is appended to File (which is created when absent:
// a new topic file); otherwise the one passage OldText is replaced by
// Content.
type Edit struct {
	// File is the memory file name, normalised as write_memory does
	// (MEMORY.md when the model gave null).
	File string `json:"file"`
	// Content is the text appended, or the replacement of OldText.
	Content string `json:"content"`
	// OldText is the exact passage to replace; nil appends.
	OldText *string `json:"old_text"`
	// Expires, when non-nil, gives the file an expiry as write_memory's
	// expires argument does ([ParseExpiry]; [NeverExpires] removes it);
	// nil keeps the file's.
	Expires *string `json:"expires,omitempty"`
}

// args is e as write_memory's JSON arguments.
func (e Edit) args() json.RawMessage {
	b, _ := json.Marshal(map[string]any{"file": e.File, "content": e.Content, "old_text": e.OldText, "expires": e.Expires})
	return b
}

// ParseEdit decodes raw as write_memory's arguments, exactly as
// [Memory.Call] does: one JSON object of "content" (required), "file",
// "old_text" and "expires", each a string or null; the file name normalised; content
// that is not blank for an append. A mistake is a *ToolError whose
// message says what to fix.
func ParseEdit(raw json.RawMessage) (Edit, *ToolError) {
	a, te := decodeArgs(raw, writeKeys)
	if te != nil {
		return Edit{}, te
	}
	_, name, te := checkWrite(a["content"], a["file"], a["old_text"])
	if te != nil {
		return Edit{}, te
	}
	if e := a["expires"]; e != nil {
		if _, err := ParseExpiry(*e, time.Now()); err != nil {
			return Edit{}, expiryErr(err)
		}
	}
	return Edit{File: name, Content: *a["content"], OldText: a["old_text"], Expires: a["expires"]}, nil
}

// Preview returns the content write_memory would leave in e.File, whose
// content is cur now (nil: absent), without writing it; or the mistake
// that would refuse it (no file to edit, OldText missing or ambiguous,
// the result over [Limits.MaxMemorySize]), as the *ToolError the model
// would read.
func (m *Memory) Preview(cur *string, e Edit) (string, *ToolError) {
	next, _, te := m.nextContent(e.File, cur, e.Content, e.OldText)
	return next, te
}

// Apply makes e as the write_memory call inv: [Memory.Call] with the
// notebook's write tool, its results and errors.
func (m *Memory) Apply(ctx context.Context, inv Invocation, e Edit) (any, error) {
	return m.Call(ctx, inv, m.names.write, e.args())
}

// MainBudget is how many characters of MEMORY.md the injected snapshot can
// show: the injection budget ([Limits.MaxTokens]) less the guidance, the
// block's delimiters, the heading and the section header.
func (m *Memory) MainBudget() int {
	n := m.injectBudget() - notes.Runes(mainHeader)
	if m.heading != "" {
		n -= 5 + notes.Runes(m.heading)
	}
	return max(n, 0)
}
