package sqlite

import (
	"context"
	"net/url"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() { store.Register("sqlite", openURL) }

// openURL opens "sqlite:///abs/path.db" or "sqlite:rel/path.db" with the
// parameters table and busy_timeout.
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	path, err := store.URLFilePath(u)
	if err != nil {
		return nil, err
	}
	if err := store.CheckQuery(u, "table", "busy_timeout"); err != nil {
		return nil, err
	}
	q := u.Query()
	o := &Options{Table: q.Get("table")}
	if v := q.Get("busy_timeout"); v != "" {
		if o.BusyTimeout, err = time.ParseDuration(v); err != nil || o.BusyTimeout <= 0 {
			return nil, store.URLError(u, "busy_timeout must be a positive Go duration such as 30s")
		}
	}
	return New(ctx, path, o)
}
