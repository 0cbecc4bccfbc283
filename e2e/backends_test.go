package e2e_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	_ "github.com/agentmem/agentmem/core/filestore"
	_ "github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
	"github.com/agentmem/agentmem/dynamodb"
	_ "github.com/agentmem/agentmem/firestore"
	_ "github.com/agentmem/agentmem/postgres"
	_ "github.com/agentmem/agentmem/sqlite"
)

// seq numbers the tables, collections and containers of this process.
var seq atomic.Int64

// unique returns a name unique to this process run.
func unique(prefix string) string {
	return fmt.Sprintf("%s%d_%d_%s", prefix, os.Getpid(), seq.Add(1), rand.Text()[:6])
}

// harnesses returns one harness per backend: a fresh, isolated driver per
// subtest, opened by store URL as an application would (store.OpenDriver,
// the blank imports above registering the schemes). The cloud backends
// need their emulator (the test fails saying how to start it when its
// endpoint is not set).
func harnesses() []contract.Harness {
	return []contract.Harness{
		{Name: "memstore", Parallel: true, NewDriver: func(t *testing.T) driver.Driver { return open(t, "mem://") }},
		{Name: "filestore", Parallel: true, NewDriver: func(t *testing.T) driver.Driver {
			return open(t, "file://"+filepath.ToSlash(t.TempDir()))
		}},
		{Name: "sqlite", Parallel: true, NewDriver: func(t *testing.T) driver.Driver {
			return open(t, "sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "memory.db")))
		}},
		{Name: "postgres", Parallel: true, NewDriver: newPostgres},
		{Name: "dynamodb", Parallel: true, NewDriver: func(t *testing.T) driver.Driver { return newDynamoDB(t) }},
		{Name: "firestore", Parallel: true, NewDriver: func(t *testing.T) driver.Driver { return newFirestore(t) }},
		{Name: "cosmosdb", Parallel: true, NewDriver: func(t *testing.T) driver.Driver { return newCosmosDB(t) }},
	}
}

// open opens the driver rawURL names, closed when the test ends (the
// store over it closes it too; a second Close is harmless).
func open(t testing.TB, rawURL string) driver.Driver {
	t.Helper()
	d, err := store.OpenDriver(t.Context(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// setenv sets an environment variable the SDKs read. t.Setenv cannot be
// used in parallel tests; every subtest sets the same value.
func setenv(t testing.TB, name, value string) {
	if os.Getenv(name) != value {
		if err := os.Setenv(name, value); err != nil {
			t.Fatal(err)
		}
	}
}

func newPostgres(t *testing.T) driver.Driver { return postgresDriver(t) }

// postgresDriver opens a driver on a fresh table of the Postgres emulator,
// dropped when t ends.
func postgresDriver(t testing.TB) driver.Driver {
	base := emulator.Require(t, emulator.PostgresURL)
	table := unique("e2e")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Errorf("drop %s: %v", table, err)
			return
		}
		defer c.Close(context.Background())
		q := fmt.Sprintf(`DROP TABLE IF EXISTS %q, %q CASCADE`, table+"_receipts", table)
		if _, err := c.Exec(context.Background(), q); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
	return open(t, u.String())
}

func newDynamoDB(t testing.TB) driver.Driver {
	endpoint := emulator.Require(t, emulator.DynamoDBEndpoint)
	// DynamoDB Local takes letters-only keys; the SDK's default chain
	// finds them in the environment.
	setenv(t, "AWS_ACCESS_KEY_ID", "agentmemKey")
	setenv(t, "AWS_SECRET_ACCESS_KEY", "agentmemSecret")
	table := unique("e2e-")
	d := open(t, "dynamodb://"+table+"?region=us-east-1&endpoint="+url.QueryEscape(endpoint))
	c := d.(*dynamodb.Driver).Client()
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &awsdynamodb.DeleteTableInput{TableName: &table})
	})
	return d
}

func newFirestore(t testing.TB) driver.Driver {
	host := emulator.Require(t, emulator.FirestoreHost)
	return open(t, "firestore://demo-agentmem-e2e/"+unique("e2e")+"?emulator_host="+host)
}

func newCosmosDB(t testing.TB) driver.Driver {
	endpoint, err := url.Parse(emulator.Require(t, emulator.CosmosEndpoint))
	if err != nil {
		t.Fatal(err)
	}
	key := emulator.Require(t, emulator.CosmosKey)
	setenv(t, cosmosdb.KeyEnv, key)
	db := unique("agentmem-e2e-")
	rawURL := "cosmosdb://" + endpoint.Host + "/" + db + "/memory"
	if endpoint.Scheme == "http" {
		rawURL += "?insecure=1"
	}
	t.Cleanup(func() {
		cred, err := azcosmos.NewKeyCredential(key)
		if err != nil {
			return
		}
		c, err := azcosmos.NewClientWithKey(endpoint.String(), cred, nil)
		if err != nil {
			return
		}
		if d, err := c.NewDatabase(db); err == nil {
			_, _ = d.Delete(context.Background(), nil)
		}
	})
	return open(t, rawURL)
}
