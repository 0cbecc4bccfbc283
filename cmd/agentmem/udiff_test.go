package main

import (
	"strings"
	"testing"
)

// writeUnified writes textdiff's diff and reports a difference; equal
// texts write nothing.
func TestWriteUnified(t *testing.T) {
	var sb strings.Builder
	if differ, err := writeUnified(&sb, "A", "B", "x\n", "x\n"); differ || err != nil || sb.Len() != 0 {
		t.Fatalf("equal: %v, %v, %q", differ, err, sb.String())
	}
	differ, err := writeUnified(&sb, "A", "B", "a\n", "a\nb\n")
	if want := "--- A\n+++ B\n@@ -1 +1,2 @@\n a\n+b\n"; !differ || err != nil || sb.String() != want {
		t.Fatalf("writeUnified = %v, %v\n%s\nwant\n%s", differ, err, sb.String(), want)
	}
}
