package cosmosdb

import (
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// DefaultCacheSize is the default number of entries in each of the
// driver's small caches (see Options.CacheSize).
const DefaultCacheSize = 1024

// hints is a small bounded map safe for concurrent use. When full it forgets
// an arbitrary entry: every cached value here is only a hint that a
// conditional request confirms, so losing one costs a read, never
// correctness.
type hints[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newHints[K comparable, V any](n int) *hints[K, V] {
	return &hints[K, V]{max: n, m: make(map[K]V)}
}

func (c *hints[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *hints[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = v
}

func (c *hints[K, V]) drop(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}

// state is what the driver last saw of an item: the store's version (and
// for receipts whether it was completed) together with the ETag of that
// exact state. A request sent with If-Match on the ETag applies only if
// the item is still in that state, so a stale entry can only cause a 412,
// after which the driver reads the item again.
type state struct {
	version   string
	completed bool
	etag      azcore.ETag
}
