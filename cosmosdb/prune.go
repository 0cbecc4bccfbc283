package cosmosdb

import (
	"math"
	"time"
)

// Expiry. The driver implements no driver.Pruner: receipts, delete
// tombstones and history entries carry a ttl, and Cosmos DB deletes them
// when it runs out (on a container with per-item ttl on, as New creates
// them; see ContainerProperties).

// expiry returns the stored form of an expiry time and the item's ttl: the
// whole seconds from now until t, rounded up, at least 1 (Cosmos DB counts
// an item's ttl from its last write).
func expiry(t, now time.Time) (string, *int32) {
	if t.IsZero() {
		return "", nil
	}
	secs := math.Ceil(t.Sub(now).Seconds())
	ttl := int32(min(max(secs, 1), math.MaxInt32))
	return formatTime(t), &ttl
}
