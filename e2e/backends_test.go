package e2e_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	gfirestore "cloud.google.com/go/firestore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/filestore"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/cosmosdb"
	"github.com/agentmem/agentmem/dynamodb"
	"github.com/agentmem/agentmem/firestore"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/sqlite"
)

// seq numbers the tables, collections and containers of this process.
var seq atomic.Int64

// unique returns a name unique to this process run.
func unique(prefix string) string {
	return fmt.Sprintf("%s%d_%d_%s", prefix, os.Getpid(), seq.Add(1), rand.Text()[:6])
}

// harnesses returns one harness per backend: a fresh, isolated driver per
// subtest. The cloud backends need their emulator (the test fails saying
// how to start it when its endpoint is not set).
func harnesses() []contract.Harness {
	return []contract.Harness{
		{Name: "memstore", Parallel: true, NewDriver: func(t *testing.T) driver.Driver { return memstore.New() }},
		{Name: "filestore", Parallel: true, NewDriver: func(t *testing.T) driver.Driver {
			return must[driver.Driver](t)(filestore.New(t.Context(), t.TempDir(), nil))
		}},
		{Name: "sqlite", Parallel: true, NewDriver: func(t *testing.T) driver.Driver {
			d := must[*sqlite.Driver](t)(sqlite.New(t.Context(), filepath.Join(t.TempDir(), "memory.db"), nil))
			t.Cleanup(func() { _ = d.Close() })
			return d
		}},
		{Name: "postgres", Parallel: true, NewDriver: newPostgres},
		{Name: "dynamodb", Parallel: true, NewDriver: newDynamoDB},
		{Name: "firestore", Parallel: true, NewDriver: newFirestore},
		{Name: "cosmosdb", Parallel: true, NewDriver: newCosmosDB},
	}
}

// must returns a function that fails t on a non-nil error and returns v.
func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func newPostgres(t *testing.T) driver.Driver {
	url := emulator.Require(t, emulator.PostgresURL)
	table := unique("e2e")
	d := must[*postgres.Driver](t)(postgres.Open(t.Context(), url, &postgres.Options{Table: table}))
	t.Cleanup(func() {
		_ = d.Close()
		c, err := pgx.Connect(context.Background(), url)
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
	return d
}

func newDynamoDB(t *testing.T) driver.Driver {
	c := awsdynamodb.New(awsdynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(emulator.Require(t, emulator.DynamoDBEndpoint)),
		Credentials:  credentials.NewStaticCredentialsProvider("agentmemKey", "agentmemSecret", ""),
	})
	table := unique("e2e-")
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &awsdynamodb.DeleteTableInput{TableName: &table})
	})
	return must[driver.Driver](t)(dynamodb.New(t.Context(), c, table, nil))
}

func newFirestore(t *testing.T) driver.Driver {
	host := emulator.Require(t, emulator.FirestoreHost)
	if os.Getenv("FIRESTORE_EMULATOR_HOST") != host {
		// The client finds the emulator here; t.Setenv cannot be used in
		// parallel tests, and every subtest sets the same value.
		if err := os.Setenv("FIRESTORE_EMULATOR_HOST", host); err != nil {
			t.Fatal(err)
		}
	}
	c := must[*gfirestore.Client](t)(gfirestore.NewClient(context.Background(), "demo-agentmem-e2e"))
	t.Cleanup(func() { _ = c.Close() })
	return must[driver.Driver](t)(firestore.New(t.Context(), c, unique("e2e"), nil))
}

func newCosmosDB(t *testing.T) driver.Driver {
	cred := must[azcosmos.KeyCredential](t)(azcosmos.NewKeyCredential(emulator.Require(t, emulator.CosmosKey)))
	c := must[*azcosmos.Client](t)(azcosmos.NewClientWithKey(emulator.Require(t, emulator.CosmosEndpoint), cred, nil))
	db := unique("agentmem-e2e-")
	t.Cleanup(func() {
		if d, err := c.NewDatabase(db); err == nil {
			_, _ = d.Delete(context.Background(), nil)
		}
	})
	return must[driver.Driver](t)(cosmosdb.New(t.Context(), c, db, "memory", nil))
}
