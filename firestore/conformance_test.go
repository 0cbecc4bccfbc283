package firestore_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/firestore"
)

func TestConformance(t *testing.T) {
	clients := firestore.EmulatorClients(t, 2)
	client, other := clients[0], clients[1]
	var n atomic.Int64
	contract.Run(t, contract.Harness{
		Name: "firestore",
		// A collection of its own per subtest isolates it, so cases run
		// in parallel.
		NewDriver: func(t *testing.T) driver.Driver {
			// The emulator locks a document for a whole transaction and
			// aborts one that waits too long ("Transaction lock timeout"):
			// on a 2-core machine loaded by other test runs, eight replays
			// racing on one document once outlasted the default 5 attempts.
			d, err := firestore.New(t.Context(), client, fmt.Sprintf("c%04d", n.Add(1)), &firestore.Options{MaxAttempts: 20})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		// The same collection through a second client.
		Reopen: func(t *testing.T, d driver.Driver) driver.Driver {
			d2, err := firestore.New(t.Context(), other, d.(*firestore.Driver).Collection().ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			return d2
		},
		Capabilities: driver.Capabilities{AtomicMutation: true, BatchGet: true, ScopeRead: true, History: true},
		// The emulator locks documents pessimistically inside transactions
		// and serialises contended ones slowly (20 writers on one document
		// took 1 m 45 s), so the concurrent-append case uses 4 × 10.
		Writers:  4,
		Appends:  10,
		Parallel: true,
		Cases:    firestoreCases,
	})
}
