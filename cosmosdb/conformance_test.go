package cosmosdb_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/cosmosdb"
)

func TestConformance(t *testing.T) {
	db := newDatabase(t)
	contract.Run(t, contract.Harness{
		Name:      "cosmosdb",
		NewDriver: func(t *testing.T) driver.Driver { return db.newDriver(t) },
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			return db.reopen(t, d.(*cosmosdb.Driver))
		},
		// Mutate is one TransactionalBatch in the file's partition (the
		// local server's batch is atomic with the patch in
		// scripts/emulators.sh; TestEmulatorBatchAtomic checks it).
		// History entries ride in that batch (Historian, every mode).
		Capabilities: driver.Capabilities{AtomicMutation: true, BatchGet: true, ScopeRead: true, History: true},
		Parallel:     true,
	})
}
