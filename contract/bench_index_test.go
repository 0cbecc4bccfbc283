package contract_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
)

// BenchmarkIndexedWriteMemstore is contract.BenchIndexedWrite on memstore.
func BenchmarkIndexedWriteMemstore(b *testing.B) {
	contract.BenchIndexedWrite(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
}

// BenchmarkTermIndexedWriteMemstore is contract.BenchTermIndexedWrite on
// memstore.
func BenchmarkTermIndexedWriteMemstore(b *testing.B) {
	contract.BenchTermIndexedWrite(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
}

// BenchmarkHybridSearchMemstore is contract.BenchHybridSearch on memstore.
func BenchmarkHybridSearchMemstore(b *testing.B) {
	contract.BenchHybridSearch(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
}
