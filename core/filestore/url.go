package filestore

import (
	"context"
	"net/url"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() { store.Register("file", openURL) }

// openURL opens "file:///abs/dir" or "file:rel/dir".
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	dir, err := driver.URLFilePath(u)
	if err != nil {
		return nil, err
	}
	if err := driver.CheckQuery(u); err != nil {
		return nil, err
	}
	noCreate, err := driver.NoCreate(u)
	if err != nil {
		return nil, err
	}
	return New(ctx, dir, &Options{NoCreate: noCreate})
}
