package eino_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	agentmemeino "github.com/agentmem/agentmem/eino"
)

// TestNilArguments checks that a nil notebook gets ErrNilMemory, which
// wraps store.ErrNilArgument and says "eino: " first.
func TestNilArguments(t *testing.T) {
	_, err := agentmemeino.NewMiddleware(nil, nil)
	if !errors.Is(err, agentmemeino.ErrNilMemory) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewMiddleware(nil): %v", err)
	}
	if !strings.HasPrefix(agentmemeino.ErrNilMemory.Error(), "eino: ") {
		t.Errorf("%q does not start with \"eino: \"", agentmemeino.ErrNilMemory)
	}
}
