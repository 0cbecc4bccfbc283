package firestore_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/firestore"
)

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn): backend calls and round trips of a write_memory
// append, a create and a snapshot.
func BenchmarkTurn(b *testing.B) {
	client := firestore.EmulatorClients(b, 1)[0]
	var n atomic.Int64
	contract.BenchTurn(b, func(b *testing.B) driver.Driver {
		d, err := firestore.New(b.Context(), client, fmt.Sprintf("turn%04d", n.Add(1)), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkContention: 16 writers × 10 appends onto one file (see
// contract.BenchContention; a compare-and-swap with a backoff that adapts
// to contention). Issue 18: 0 failures.
func BenchmarkContention(b *testing.B) {
	client := firestore.EmulatorClients(b, 1)[0]
	var n atomic.Int64
	contract.BenchContention(b, func(b *testing.B) driver.Driver {
		d, err := firestore.New(b.Context(), client, fmt.Sprintf("cont%04d", n.Add(1)), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}, 160, 1, 16)
}
