package otel_test

import (
	"context"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	amotel "github.com/agentmem/agentmem/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkWrapper measures the instrumentation's overhead per store call
// on memstore: a read and a CAS write per iteration (two store calls, two
// driver calls), raw, with the driver wrapped (WrapDriver), and with the
// driver wrapped and a store span per operation (NewStore), each with
// no-op providers (instrumentation installed, no SDK) and with the SDK
// recording every span and metric (spans dropped at end, no exporter).
func BenchmarkWrapper(b *testing.B) {
	sdk := func() *amotel.Options {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
		return &amotel.Options{TracerProvider: tp, MeterProvider: mp}
	}
	noops := func() *amotel.Options {
		return &amotel.Options{TracerProvider: noop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}
	}
	wrapped := func(d driver.Driver, opts *amotel.Options) *store.Store {
		return store.New(amotel.WrapDriver(d, opts), nil)
	}
	full := func(d driver.Driver, opts *amotel.Options) *store.Store {
		s, _ := amotel.NewStore(d, opts, nil)
		return s
	}
	for _, bc := range []struct {
		name string
		open func() *store.Store
	}{
		{"raw", func() *store.Store { return store.New(mustMemDriver(), nil) }},
		{"noop", func() *store.Store { return wrapped(mustMemDriver(), noops()) }},
		{"sdk", func() *store.Store { return wrapped(mustMemDriver(), sdk()) }},
		// NewStore: the driver wrapper and a store span per operation.
		{"noop+store", func() *store.Store { return full(mustMemDriver(), noops()) }},
		{"sdk+store", func() *store.Store { return full(mustMemDriver(), sdk()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			s := bc.open()
			m, err := s.Write(ctx, store.WriteRequest{Path: "k/main/MEMORY.md", Content: "- lives in Hanoi\n"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				f, err := s.Read(ctx, "k/main/MEMORY.md", 4000)
				if err != nil {
					b.Fatal(err)
				}
				if m, err = s.Write(ctx, store.WriteRequest{Path: "k/main/MEMORY.md", Content: f.Content, Expected: m.Version}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2, "calls/op")
		})
	}
}
