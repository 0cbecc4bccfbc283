package cosmosdb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// KeyEnv is the environment variable a store URL's opener reads the
// account key from. A URL never carries the key.
const KeyEnv = "AGENTMEM_COSMOS_KEY"

// ErrNoKey reports a cosmosdb:// URL opened without [KeyEnv] set.
var ErrNoKey = errors.New("cosmosdb: set " + KeyEnv + " to the account key (or build the client yourself and call New)")

func init() { store.Register("cosmosdb", openURL) }

// openURL opens "cosmosdb://HOST/DATABASE/CONTAINER" (parameter insecure
// for the emulator's http endpoint) with the key from KeyEnv.
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if u.Opaque != "" || u.User != nil || u.Host == "" || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return nil, driver.URLError(u, "write cosmosdb://ACCOUNT.documents.azure.com/DATABASE/CONTAINER (the key comes from %s)", KeyEnv)
	}
	if err := driver.CheckQuery(u, "insecure"); err != nil {
		return nil, err
	}
	noCreate, err := driver.NoCreate(u)
	if err != nil {
		return nil, err
	}
	scheme := "https"
	if v := u.Query().Get("insecure"); v != "" {
		insecure, err := strconv.ParseBool(v)
		if err != nil {
			return nil, driver.URLError(u, "set insecure=1 for an emulator's http endpoint, or insecure=0 (the default) for https; it takes 1, 0, true or false")
		}
		if insecure {
			scheme = "http"
		}
	}
	key := os.Getenv(KeyEnv)
	if key == "" {
		return nil, ErrNoKey
	}
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		// The SDK's message never repeats the key.
		return nil, fmt.Errorf("cosmosdb: %s does not hold an account key: %w", KeyEnv, err)
	}
	client, err := azcosmos.NewClientWithKey(scheme+"://"+u.Host+"/", cred, nil)
	if err != nil {
		return nil, fmt.Errorf("cosmosdb: %w", err)
	}
	return New(ctx, client, parts[0], parts[1], &Options{NoCreate: noCreate})
}
