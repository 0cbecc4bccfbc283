package contract_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
)

// BenchmarkHistoryMemstore is contract.BenchHistory on memstore.
func BenchmarkHistoryMemstore(b *testing.B) {
	contract.BenchHistory(b, func(b *testing.B) driver.Driver { return memstore.New() })
}
