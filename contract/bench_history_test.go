package contract_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
)

// BenchmarkHistoryMemstore is contract.BenchHistory on memstore.
func BenchmarkHistoryMemstore(b *testing.B) {
	contract.BenchHistory(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
}

// BenchmarkHistoryFilestore is contract.BenchHistory on filestore.
func BenchmarkHistoryFilestore(b *testing.B) {
	contract.BenchHistory(b, func(b *testing.B) driver.Driver {
		d, err := filestore.New(b.Context(), b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// BenchmarkLifetimeMemstore is contract.BenchLifetime on memstore.
func BenchmarkLifetimeMemstore(b *testing.B) {
	contract.BenchLifetime(b, func(b *testing.B) driver.Driver { return newMemDriver(b) })
}

// BenchmarkLifetimeFilestore is contract.BenchLifetime on filestore.
func BenchmarkLifetimeFilestore(b *testing.B) {
	contract.BenchLifetime(b, func(b *testing.B) driver.Driver {
		d, err := filestore.New(b.Context(), b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}
