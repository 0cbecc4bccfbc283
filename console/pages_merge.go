// The conflict view's three-way merge: the version the editor started
// from (base), the text submitted (yours) and the file as it is now
// (theirs), merged by textdiff.Merge into a form that saves over theirs.

package console

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/core/textdiff"
)

// mergeData is the merge the conflict view offers: Text (with conflict
// markers when Overlaps is not empty) in a form of its own, saved with
// its own Token as a compare-and-swap on theirs' version.
type mergeData struct {
	Text, Token string
	// Open and Close are the markers around each overlap in Text.
	Open, Close string
	// Base is the version the edit started from.
	Base     string
	Overlaps []overlap
	// Rows is the textarea's height: Text's lines and two more, from 6
	// to 30.
	Rows int
}

// overlap is one conflict of the merge, numbered from 1.
type overlap struct {
	N int
	textdiff.Conflict
}

// mergeFor merges yours and theirs over base, the version the editor was
// rendered from. It returns nil and why not when base cannot be read
// (the store kept no history of it): the view is then the one without a
// merge.
func (h *Handler) mergeFor(pc *pageCall, p, base, yours, theirs string) (*mergeData, string) {
	e, err := h.s.ReadVersion(pc.r.Context(), p, base)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "The version you started from is not in the store's history (history is off, or that version has expired), so no merge can be offered: " +
			"compare the two texts below. With history on (history=on in the store's URL) this page merges them for you."
	case err != nil:
		h.log.ErrorContext(pc.r.Context(), "agentmem/console: the conflict view could not read the version the edit started from", "path", p, "error", err)
		return nil, "The version you started from could not be read (the error is in the server's log), so no merge can be offered: compare the two texts below."
	}
	m := textdiff.Merge(e.Content, yours, theirs)
	d := &mergeData{Text: m.Text, Token: formToken(), Open: textdiff.MarkerYours, Close: textdiff.MarkerTheirs, Base: base,
		Rows: min(max(strings.Count(m.Text, "\n")+2, 6), 30)}
	for i, c := range m.Conflicts {
		d.Overlaps = append(d.Overlaps, overlap{N: i + 1, Conflict: c})
	}
	return d, ""
}

// unresolved is the save's refusal of a merge form whose text still holds
// conflict markers, "" when it holds none.
func unresolved(content string) string {
	n := textdiff.CountConflicts(content)
	if n == 0 {
		return ""
	}
	places := "1 place is"
	if n > 1 {
		places = fmt.Sprintf("%d places are", n)
	}
	return places + " still marked " + textdiff.MarkerYours + " … " + textdiff.MarkerTheirs +
		": keep what you want of each side, delete the marker lines, then save. Nothing was saved."
}
