package search

import (
	"context"
	"testing"
)

type nopEmbedder struct{}

func (nopEmbedder) Model() string { return "nop" }
func (nopEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}

// BenchmarkEnqueueIndex is what a write that lands pays for the index when
// the worker is lingering (no goroutine to wake) and when it is parked (a
// receiver to wake).
func BenchmarkEnqueueIndex(b *testing.B) {
	for _, parked := range []bool{false, true} {
		name := "lingering"
		if parked {
			name = "parked"
		}
		b.Run(name, func(b *testing.B) {
			s := newTestStore(nil, &Options{Embedder: nopEmbedder{}}) // no driver, no worker: this benchmark drains the queue
			got := make(chan struct{})
			if parked {
				go func() {
					for range s.ix.wake {
						got <- struct{}{}
					}
				}()
			}
			ctx := b.Context()
			for b.Loop() {
				s.ix.parked = parked
				s.indexAfter(ctx, "u/main/a.md")
				b.StopTimer()
				if parked {
					<-got
				}
				s.ix.queue, s.ix.jobs = s.ix.queue[:0], map[string]*indexJob{}
				b.StartTimer()
			}
		})
	}
}
