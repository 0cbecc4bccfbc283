package contract_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// The wrappers forward the backend's name, so telemetry and logs of a
// wrapped store name the backend, not the wrapper.
func TestWrappersForwardTheBackendName(t *testing.T) {
	for name, d := range map[string]driver.Driver{
		"Interceptor": contract.NewInterceptor(newMemDriver(t)),
		"Primitives":  contract.Primitives(newMemDriver(t)),
		"Counter":     contract.NewCounter(newMemDriver(t)),
		"Faults":      contract.NewFaults(contract.NewCounter(newMemDriver(t))),
	} {
		if got := driver.Name(d); got != "memstore" {
			t.Errorf("%s: driver.Name = %q, want memstore", name, got)
		}
		if got := store.New(d, nil).Backend(); got != "memstore" {
			t.Errorf("%s: Store.Backend = %q, want memstore", name, got)
		}
	}
}
