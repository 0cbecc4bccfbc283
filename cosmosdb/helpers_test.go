package cosmosdb_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/cosmosdb"
)

// newClient returns a client for the endpoint of the Cosmos DB emulator
// (or a real account) given by the environment.
func newClient(tb testing.TB, transport policy.Transporter) *azcosmos.Client {
	tb.Helper()
	endpoint := emulator.Require(tb, emulator.CosmosEndpoint)
	cred, err := azcosmos.NewKeyCredential(emulator.Require(tb, emulator.CosmosKey))
	if err != nil {
		tb.Fatal(err)
	}
	o := &azcosmos.ClientOptions{}
	if transport != nil {
		o.Transport = transport
	}
	c, err := azcosmos.NewClientWithKey(endpoint, cred, o)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// database is one throwaway database; each driver gets its own container.
type database struct {
	client *azcosmos.Client
	name   string
	n      atomic.Int64
}

func newDatabase(tb testing.TB) *database {
	tb.Helper()
	db := &database{client: newClient(tb, nil), name: "agentmem-test-" + rand.Text()[:10]}
	tb.Cleanup(func() {
		if d, err := db.client.NewDatabase(db.name); err == nil {
			_, _ = d.Delete(context.WithoutCancel(tb.Context()), nil)
		}
	})
	return db
}

// newDriver returns a driver over a fresh container, deleted at cleanup.
func (db *database) newDriver(tb testing.TB) *cosmosdb.Driver {
	tb.Helper()
	name := fmt.Sprintf("c%d", db.n.Add(1))
	d, err := cosmosdb.New(tb.Context(), db.client, db.name, name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _, _ = d.Container().Delete(context.WithoutCancel(tb.Context()), nil) })
	return d
}

// reopen returns a second driver, with its own client, over d's container.
func (db *database) reopen(tb testing.TB, d *cosmosdb.Driver) *cosmosdb.Driver {
	tb.Helper()
	d2, err := cosmosdb.New(tb.Context(), newClient(tb, nil), db.name, d.Container().ID(), &cosmosdb.Options{NoCreate: true})
	if err != nil {
		tb.Fatal(err)
	}
	return d2
}

// requests is an HTTP transport that counts the requests that reach the
// service, leaving out the account reads (GET /) the SDK makes for
// endpoint discovery.
type requests struct {
	n     atomic.Int64
	inner http.Client
}

func (r *requests) Do(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/" && req.URL.Path != "" {
		r.n.Add(1)
	}
	return r.inner.Do(req)
}

func (r *requests) count() int64 { return r.n.Load() }

// countedDriver returns a driver over a fresh container whose client
// counts its requests.
func (db *database) countedDriver(tb testing.TB) (*cosmosdb.Driver, *requests) {
	tb.Helper()
	rq := &requests{}
	d := db.newDriver(tb)
	d2, err := cosmosdb.New(tb.Context(), newClient(tb, rq), db.name, d.Container().ID(), &cosmosdb.Options{NoCreate: true})
	if err != nil {
		tb.Fatal(err)
	}
	return d2, rq
}
