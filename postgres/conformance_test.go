package postgres

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
)

func TestConformance(t *testing.T) {
	url := testURL(t)
	// One pool shared by every subtest's driver (New, caller-owned);
	// Reopen opens a second pool on the same table (Open, driver-owned),
	// as another process would.
	pool := newPool(t, url, nil, 8)
	contract.Run(t, contract.Harness{
		Name: "postgres",
		NewDriver: func(t *testing.T) driver.Driver {
			d, err := New(t.Context(), pool, &Options{Table: uniqueTable(t, url)})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			d2, err := openPool(t.Context(), url, &Options{Table: d.(*Driver).Table()})
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
