package driver_test

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/driver"
)

// A SQL driver's PruneExpired: one bounded DELETE per call of batch, each
// its own transaction, until a batch comes back short.
func ExamplePruneBatches() {
	expired := 7 // rows the table holds that expired
	batch := func(ctx context.Context) (int, error) {
		n := min(3, expired) // DELETE … LIMIT 3
		expired -= n
		fmt.Println("batch removed", n)
		return n, nil
	}
	total, err := driver.PruneBatches(context.Background(), 3, batch)
	fmt.Println(total, err)
	// Output:
	// batch removed 3
	// batch removed 3
	// batch removed 1
	// 7 <nil>
}
