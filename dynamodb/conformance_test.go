package dynamodb_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/dynamodb"
)

func TestConformance(t *testing.T) {
	c := newClient(t)
	contract.Run(t, contract.Harness{
		Name:      "dynamodb",
		NewDriver: func(t *testing.T) driver.Driver { return newDriver(t, c, nil) },
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			// A second client and driver over the same table, as another
			// process would have.
			d2, err := dynamodb.New(t.Context(), newClient(t), d.(*dynamodb.Driver).Table(), &dynamodb.Options{NoCreate: true})
			if err != nil {
				t.Fatal(err)
			}
			return d2
		},
		Capabilities: driver.Capabilities{AtomicMutation: true, BatchGet: true, ScopeRead: true, History: true},
		Parallel:     true,
	})
}
