package anthropic_test

import (
	"testing"

	"github.com/agentmem/agentmem/anthropic/anthropictest"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
)

// TestCommands runs the table of every command and error string on memstore
// and filestore; the e2e module's TestAnthropicCommands runs it on every
// backend, SQLite included.
func TestCommands(t *testing.T) {
	t.Parallel()
	t.Run("memstore", func(t *testing.T) {
		t.Parallel()
		anthropictest.Commands(t, func(t *testing.T) driver.Driver { return newMemDriver(t) })
	})
	t.Run("filestore", func(t *testing.T) {
		t.Parallel()
		anthropictest.Commands(t, func(t *testing.T) driver.Driver {
			d, err := filestore.New(t.Context(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
	})
}
