package contract_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
)

func TestConformance(t *testing.T) {
	contract.Run(t, contract.Harness{
		Name:      "memstore",
		NewDriver: func(t *testing.T) driver.Driver { return newMemDriver(t) },
		Capabilities: driver.Capabilities{
			AtomicMutation: true, AtomicCollision: true, BatchGet: true, ScopeRead: true, Snapshot: true, Prune: true, Append: true, History: true,
		},
		Parallel: true,
	})
	contract.Run(t, contract.Harness{
		Name: "filestore",
		NewDriver: func(t *testing.T) driver.Driver {
			d, err := filestore.New(t.Context(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			d2, err := filestore.New(t.Context(), d.(*filestore.Driver).Root(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return d2
		},
		Capabilities: driver.Capabilities{BatchGet: true, ScopeRead: true, Snapshot: true, Prune: true, Append: true, History: true},
		Parallel:     true,
	})
}
