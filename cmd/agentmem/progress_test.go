package main

import (
	"strings"
	"testing"
)

// TestProgressBarOnTerminal checks that migrate's progress on a terminal is
// a bar with count and rate, and plain lines elsewhere.
func TestProgressBarOnTerminal(t *testing.T) {
	a, _, errOut := testApp()
	a.isTerminal = func(any) bool { return true }
	p := a.progress("migrate")
	for i := 1; i <= 40; i++ {
		p(i, 40)
	}
	out := errOut.String()
	if !strings.Contains(out, "migrate") || !strings.Contains(out, "(40/40, ") || !strings.Contains(out, "files/s") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("progress bar drew %q", out)
	}

	a, _, errOut = testApp()
	p = a.progress("migrate")
	for i := 1; i <= 40; i++ {
		p(i, 40)
	}
	if lines := strings.Count(errOut.String(), "\n"); lines != 11 || strings.Contains(errOut.String(), "\r") {
		t.Fatalf("plain progress: %d lines: %q", lines, errOut)
	}
}
