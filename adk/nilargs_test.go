package adk_test

import (
	"errors"
	"strings"
	"testing"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/core/store"
)

// TestNilArguments checks that a nil notebook or store gets the package's
// sentinel, which wraps store.ErrNilArgument, and that the sentinels say
// "adk: " first.
func TestNilArguments(t *testing.T) {
	if _, err := agentmemadk.NewToolset(nil, nil).Tools(nil); !errors.Is(err, agentmemadk.ErrNilMemory) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewToolset(nil).Tools: %v", err)
	}
	if _, err := agentmemadk.NewMemoryService(nil, nil); !errors.Is(err, agentmemadk.ErrNilStore) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewMemoryService(nil): %v", err)
	}
	for _, err := range []error{agentmemadk.ErrNilMemory, agentmemadk.ErrNilStore, agentmemadk.ErrNoApp, agentmemadk.ErrNoSession} {
		if !strings.HasPrefix(err.Error(), "adk: ") {
			t.Errorf("%q does not start with \"adk: \"", err)
		}
	}
}
