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
		// No Mutator: a file and its receipt live in different logical
		// partitions, and the local server's TransactionalBatch is not
		// atomic anyway (see README.md).
		Capabilities: driver.Capabilities{BatchGet: true, ScopeRead: true},
		Parallel:     true,
	})
}
