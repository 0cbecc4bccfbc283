package search

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// TestDerivedSegmentsAreReserved: the engine's derived rows live under
// segments every backend refuses as file paths.
func TestDerivedSegmentsAreReserved(t *testing.T) {
	for _, seg := range []string{IndexSegment, TermSegment} {
		if !strings.HasPrefix(seg, rowpath.Reserved) || rowpath.Valid("u/"+seg+"/x") {
			t.Errorf("%s is not a reserved segment (prefix %s)", seg, rowpath.Reserved)
		}
	}
}
