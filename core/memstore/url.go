package memstore

import (
	"context"
	"net/url"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() { store.Register("mem", openURL) }

// openURL opens "mem://": a new, empty driver.
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	if u.Opaque != "" || u.Host != "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return nil, driver.URLError(u, "write mem:// (an in-memory store has no host or path)")
	}
	if err := driver.CheckQuery(u); err != nil {
		return nil, err
	}
	if _, err := driver.NoCreate(u); err != nil { // a new in-memory store always exists
		return nil, err
	}
	return New(ctx, nil)
}
