package driver

import "sync"

// Hints is a small bounded map, safe for concurrent use, in which a driver
// remembers what it last saw of a row (a version with its ETag or update
// time) so that a later write can be one conditional request. When full it
// forgets an arbitrary entry: a hint is always confirmed by the condition of
// the request that uses it, so a lost or stale one costs a read, never
// correctness. Make one with [NewHints].
type Hints[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

// NewHints returns an empty Hints that holds at most n entries (at least 1).
func NewHints[K comparable, V any](n int) *Hints[K, V] {
	return &Hints[K, V]{max: max(n, 1), m: make(map[K]V)}
}

// Get returns the hint for k, if there is one.
func (h *Hints[K, V]) Get(k K) (V, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[k]
	return v, ok
}

// Put remembers v for k, forgetting an arbitrary other entry when full.
func (h *Hints[K, V]) Put(k K, v V) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[k]; !ok && len(h.m) >= h.max {
		for old := range h.m {
			delete(h.m, old)
			break
		}
	}
	h.m[k] = v
}

// Drop forgets the hint for k.
func (h *Hints[K, V]) Drop(k K) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, k)
}
