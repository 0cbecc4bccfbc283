package store_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

// TestHistoryRetention checks what HistoryRetention reports: the
// retention given, the default for a zero one, and 0 with history off or
// on a backend that keeps none (where writes would fail).
func TestHistoryRetention(t *testing.T) {
	for _, c := range []struct {
		name string
		s    *store.Store
		want time.Duration
	}{
		{"off", store.New(newMemDriver(t), nil), 0},
		{"default", store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}}), store.DefaultHistoryRetention},
		{"given", store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{Retention: 48 * time.Hour}}), 48 * time.Hour},
		{"backend without history", store.New(plain{newMemDriver(t)}, &store.Options{History: &store.HistoryOptions{}}), 0},
		{"nil store", nil, 0},
	} {
		if got := c.s.HistoryRetention(); got != c.want {
			t.Errorf("%s: HistoryRetention() = %v, want %v", c.name, got, c.want)
		}
		if c.s != nil {
			c.s.Close()
		}
	}
}
