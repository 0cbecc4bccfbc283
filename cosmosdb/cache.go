package cosmosdb

import (
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// DefaultCacheSize is the default number of entries in each of the
// driver's small caches (see Options.CacheSize).
const DefaultCacheSize = 1024

// state is what the driver last saw of an item: the store's version (for
// receipts whether it was completed, for history entries whether the entry
// was complete and when it expires) together with the ETag of that exact
// state. A request sent with If-Match on the ETag applies only if
// the item is still in that state, so a stale entry can only cause a 412,
// after which the driver reads the item again.
type state struct {
	version   string
	completed bool
	expires   time.Time
	etag      azcore.ETag
}
