package console

import "github.com/agentmem/agentmem/core/textdiff"

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// unifiedDiff is the unified diff (diff -u) from a to b under the headers
// aName and bName, "" when they are equal: textdiff.Unified, whose search
// is bounded (textdiff.MaxCost), so a request's cost stays bounded.
func unifiedDiff(aName, bName, a, b string) string {
	return textdiff.Unified(aName, bName, a, b, diffContext)
}
