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
// parameters table and busy_timeout; a parameter given empty is refused,
// as the PostgreSQL driver refuses an empty table.
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	path, err := driver.URLFilePath(u)
	if err != nil {
		return nil, err
	}
	if err := driver.CheckQuery(u, "table", "busy_timeout"); err != nil {
		return nil, err
	}
	q := u.Query()
	if q.Has("table") && q.Get("table") == "" {
		return nil, driver.URLError(u, "give table a name, or leave it out for the default")
	}
	o := &Options{Table: q.Get("table")}
	if o.NoCreate, err = driver.NoCreate(u); err != nil {
		return nil, err
	}
	if q.Has("busy_timeout") {
		v := q.Get("busy_timeout")
		if o.BusyTimeout, err = time.ParseDuration(v); err != nil || o.BusyTimeout <= 0 {
			return nil, driver.URLError(u, "busy_timeout must be a positive Go duration such as 30s")
		}
	}
	return New(ctx, path, o)
}
