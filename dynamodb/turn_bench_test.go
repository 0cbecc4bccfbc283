package dynamodb_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
)

// BenchmarkTurn is the notebook's cost per agent turn (see
// contract.BenchTurn): backend calls and round trips of a write_memory
// append, a create and a snapshot.
func BenchmarkTurn(b *testing.B) {
	c := newClient(b)
	contract.BenchTurn(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}

// BenchmarkContention: 16 writers × 10 appends onto one file (see
// contract.BenchContention; a compare-and-swap with a backoff that adapts
// to contention). Issue 18: 0 failures.
func BenchmarkContention(b *testing.B) {
	c := newClient(b)
	contract.BenchContention(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) }, 160, 1, 16)
}

// BenchmarkHistory is what recording history costs an idempotent write
// (see contract.BenchHistory): calls/op with history off and on, both
// modes, and the latency ratio. The full driver sends the entry in the
// write's TransactWriteItems: the same one call.
func BenchmarkHistory(b *testing.B) {
	c := newClient(b)
	contract.BenchHistory(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}

// BenchmarkIndexedWrite is an idempotent write with the search index off
// and on, alternately (see contract.BenchIndexedWrite), on DynamoDB Local:
// the latency with the index on as a ratio to off (vs-off), the embeddings
// per changed write and per unchanged rewrite, index bytes per chunk.
func BenchmarkIndexedWrite(b *testing.B) {
	c := newClient(b)
	contract.BenchIndexedWrite(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}

// BenchmarkTermIndexedWrite is a write into a folder of 1,000 notes whose
// term index is live (the folder searched once, so the change feed keeps
// it) and into one never searched, alternately (see
// contract.BenchTermIndexedWrite), on DynamoDB Local: vs-off is the ratio
// (issue 36: ≤ 1.1).
func BenchmarkTermIndexedWrite(b *testing.B) {
	c := newClient(b)
	contract.BenchTermIndexedWrite(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}

// BenchmarkHybridSearch is a search over 1,000 files of one scope, index
// warm, literal, BM25 and hybrid alternately (see
// contract.BenchHybridSearch), on DynamoDB Local: hybrid-vs-literal and
// bm25-vs-literal.
func BenchmarkHybridSearch(b *testing.B) {
	c := newClient(b)
	contract.BenchHybridSearch(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}

// BenchmarkLifetime is what a file's expiry and pin cost the reads that
// check them (see contract.BenchLifetime): a read, a listing and a
// snapshot of a folder of 200 files without lifetimes and with one on
// every file, their calls and latency ratio (vs-off).
func BenchmarkLifetime(b *testing.B) {
	c := newClient(b)
	contract.BenchLifetime(b, func(b *testing.B) driver.Driver { return newDriver(b, c, nil) })
}
