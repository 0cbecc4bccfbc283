package firestore

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() { store.Register("firestore", openURL) }

// openURL opens "firestore://PROJECT/COLLECTION" with the parameters
// database and emulator_host; the driver owns the client it creates.
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	collection := strings.Trim(u.Path, "/")
	if u.Opaque != "" || u.User != nil || u.Port() != "" || u.Host == "" || collection == "" {
		return nil, driver.URLError(u, "write firestore://PROJECT/COLLECTION (credentials come from Application Default Credentials)")
	}
	if err := driver.CheckQuery(u, "database", "emulator_host"); err != nil {
		return nil, err
	}
	if _, err := driver.NoCreate(u); err != nil { // Firestore creates nothing: a collection exists once written
		return nil, err
	}
	q := u.Query()
	database := q.Get("database")
	if database == "" {
		database = firestore.DefaultDatabaseID
	}
	var opts []option.ClientOption
	if h := q.Get("emulator_host"); h != "" {
		if strings.Contains(h, "/") {
			return nil, driver.URLError(u, "emulator_host is HOST:PORT, such as localhost:8080")
		}
		opts = append(opts, option.WithEndpoint(h), option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	client, err := firestore.NewClientWithDatabase(ctx, u.Host, database, opts...)
	if err != nil {
		return nil, fmt.Errorf("firestore: cannot create a client for project %q: %w", u.Host, err)
	}
	d, err := New(ctx, client, collection, nil)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	d.closer = client.Close
	return d, nil
}
