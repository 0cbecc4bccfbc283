package cosmosdb_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
)

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn): backend calls and round trips of a write_memory
// append, a create and a snapshot.
func BenchmarkTurn(b *testing.B) {
	db := newDatabase(b)
	contract.BenchTurn(b, func(b *testing.B) driver.Driver { return db.newDriver(b) })
}

// BenchmarkContention: 16 writers × 10 appends onto one file (see
// contract.BenchContention; a compare-and-swap with a backoff that adapts
// to contention). Issue 18: 0 failures.
func BenchmarkContention(b *testing.B) {
	db := newDatabase(b)
	contract.BenchContention(b, func(b *testing.B) driver.Driver { return db.newDriver(b) }, 160, 1, 16)
}

// BenchmarkHistory: what recording history costs an idempotent write (see
// contract.BenchHistory): backend calls per write with history off and
// on, and the latency ratio, in both modes.
func BenchmarkHistory(b *testing.B) {
	db := newDatabase(b)
	contract.BenchHistory(b, func(b *testing.B) driver.Driver { return db.newDriver(b) })
}
