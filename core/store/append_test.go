package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The backoff's ceiling doubles with each conflict from 1 ms and stops at
// MaxBackoff; a done context ends the wait at once, without counting it.
func TestBackoffGrowsAndStops(t *testing.T) {
	var b Backoff
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Wait(ctx); !errors.Is(err, context.Canceled) || b.Conflicts() != 0 {
		t.Fatalf("done context: %v, %d conflicts", err, b.Conflicts())
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond,
		16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond, 128 * time.Millisecond, MaxBackoff, MaxBackoff}
	for i, w := range want {
		b.n = i + 1
		if got := b.ceiling(); got != w {
			t.Errorf("ceiling after %d conflicts: %v, want %v", i+1, got, w)
		}
	}
	b = Backoff{}
	for range 3 {
		if err := b.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if b.Conflicts() != 3 {
		t.Fatalf("conflicts %d", b.Conflicts())
	}
	b = Backoff{n: 1 << 20}
	if b.ceiling() != MaxBackoff {
		t.Fatalf("ceiling after many conflicts: %v", b.ceiling())
	}
}
