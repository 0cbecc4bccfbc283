package search

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
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

// TestRecordTooLargeIsErrTooLarge: a chunk whose record part cannot fit
// one row is refused with driver.ErrTooLarge (store.ErrTooLarge), as the
// store's own oversized rows are.
func TestRecordTooLargeIsErrTooLarge(t *testing.T) {
	rec := record{Format: 1, File: "v1", Model: "m", Dims: 1, Chunks: []recChunk{{Hash: "h", Q: strings.Repeat("A", maxRecordChars)}}}
	if _, err := encodeRecord(rec); !errors.Is(err, driver.ErrTooLarge) {
		t.Fatalf("encodeRecord of an oversized chunk = %v, want driver.ErrTooLarge", err)
	}
}
