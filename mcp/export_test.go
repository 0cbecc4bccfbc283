package mcp

// SetAfterListing makes f run between the listing of live sessions and
// the check of subscriptions (see liveSessions), until the test ends.
func SetAfterListing(t interface{ Cleanup(func()) }, f func()) {
	afterListing.Store(&f)
	t.Cleanup(func() { afterListing.Store(nil) })
}
