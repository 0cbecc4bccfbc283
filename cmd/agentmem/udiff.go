package main

import (
	"io"

	"github.com/agentmem/agentmem/core/textdiff"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// writeUnified writes the unified diff (diff -u) of a and b, under the
// headers "--- aName" and "+++ bName", with diffContext lines of context
// (textdiff.Unified), and reports whether they differ. Nothing is written
// when they are equal.
func writeUnified(w io.Writer, aName, bName, a, b string) (bool, error) {
	d := textdiff.Unified(aName, bName, a, b, diffContext)
	if d == "" {
		return false, nil
	}
	_, err := io.WriteString(w, d)
	return true, err
}
