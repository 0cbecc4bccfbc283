package memory

import (
	"io"
	"log/slog"
	"testing"
)

// TestPolicyAccessors: jobs beside the notebook read its error mode and
// logger from the Memory.
func TestPolicyAccessors(t *testing.T) {
	m, _ := newMem(t, nil)
	if m.InjectionErrors() != IgnoreErrors || m.Logger() != slog.Default() {
		t.Fatalf("defaults: %q, %v", m.InjectionErrors(), m.Logger())
	}
	l := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, _ = newMem(t, &Options{InjectionErrors: RaiseErrors, Logger: l})
	if m.InjectionErrors() != RaiseErrors || m.Logger() != l {
		t.Fatalf("set: %q, %v", m.InjectionErrors(), m.Logger())
	}
}
