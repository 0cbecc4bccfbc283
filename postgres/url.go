package postgres

import (
	"context"
	"net/url"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() {
	store.Register("postgres", openURL)
	store.Register("postgresql", openURL)
}

// openURL opens a postgres:// or postgresql:// URL: the parameter table
// is the driver's, every other one is pgx's (libpq's names).
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, driver.URLError(u, "the query does not parse")
	}
	opts := &Options{}
	if opts.NoCreate, err = driver.NoCreate(u); err != nil {
		return nil, err
	}
	q.Del(driver.CreateParam) // agentmem's, not a connection parameter
	if t, ok := q["table"]; ok {
		if len(t) != 1 || t[0] == "" {
			return nil, driver.URLError(u, "give table once, with a name")
		}
		opts.Table = t[0]
		q.Del("table")
	}
	conn := *u
	conn.RawQuery = q.Encode()
	return openPool(ctx, conn.String(), opts)
}
