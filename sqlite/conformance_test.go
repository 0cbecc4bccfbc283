package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
)

func TestConformance(t *testing.T) {
	contract.Run(t, contract.Harness{
		Name: "sqlite",
		NewDriver: func(t *testing.T) driver.Driver {
			d, err := New(t.Context(), filepath.Join(t.TempDir(), "memory.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		// A second *sql.DB on the same file: another process's view.
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			d2, err := New(t.Context(), d.(*Driver).Path(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d2.Close() })
			return d2
		},
		Capabilities: driver.Capabilities{AtomicMutation: true, AtomicCollision: true, BatchGet: true, ScopeRead: true, Snapshot: true,
			Prune: true, Append: true, History: true},
		Parallel: true,
	})
}
