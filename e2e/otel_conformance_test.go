package e2e_test

import (
	"testing"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	amotel "github.com/agentmem/agentmem/otel"
	"go.opentelemetry.io/otel/sdk/trace"
)

// TestConformanceThroughOtel runs the conformance suite on memstore
// wrapped by otel.WrapDriver with a recording tracer: the wrapper
// forwards every capability the driver has (and reports exactly those),
// so the store keeps its fast paths and every promise holds through it.
func TestConformanceThroughOtel(t *testing.T) {
	tp := trace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	contract.Run(t, contract.Harness{
		Name: "otel(memstore)",
		NewDriver: func(t *testing.T) driver.Driver {
			return amotel.WrapDriver(newMemDriver(t), &amotel.Options{TracerProvider: tp})
		},
		Capabilities: driver.Capabilities{
			AtomicMutation: true, AtomicCollision: true, BatchGet: true, ScopeRead: true, Snapshot: true, Prune: true, Append: true, History: true,
		},
		Parallel: true,
	})
}
