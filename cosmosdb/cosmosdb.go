package cosmosdb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// PartitionKeyPath is the partition key path of the container the driver
// uses. A container created elsewhere must have it.
const PartitionKeyPath = "/pk"

// Options configures a Driver. The zero value (or nil) means defaults.
type Options struct {
	// SkipCreate disables creating the database and container when they
	// are absent; New then fails if the container does not exist.
	SkipCreate bool
	// Throughput, when set, is the provisioned throughput of a container
	// that New creates (nil: the account's default, e.g. serverless).
	Throughput *azcosmos.ThroughputProperties
	// CacheSize bounds the driver's caches of ETags (files, receipts and
	// history entries) and session tokens, in entries each. Default DefaultCacheSize.
	CacheSize int
}

// Driver is the Cosmos DB driver. It is safe for concurrent use. It does
// not own the client: Close leaves it open.
type Driver struct {
	c        *azcosmos.ContainerClient
	files    *driver.Hints[string, state] // path → last seen (version, ETag)
	receipts *driver.Hints[string, state] // operation id → last seen (version, completed, ETag)
	history  *driver.Hints[string, state] // history key → last seen (version, complete, expiry, ETag)
	// receiptParts maps an operation id to the partition of the receipt
	// Mutate wrote or GetReceipt found there (the file's partition).
	receiptParts *driver.Hints[string, string]
	sessions     *driver.Hints[string, string] // partition key → last session token
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Mutator     = (*Driver)(nil)
	_ driver.BatchGetter = (*Driver)(nil)
	_ driver.ScopeReader = (*Driver)(nil)
	_ driver.Historian   = (*Driver)(nil)
)

// New returns a driver over container in database, reached through
// client. Unless opts.SkipCreate is set it creates the database and the
// container (partition key PartitionKeyPath, per-item TTL enabled, only
// the queried fields indexed) when they are absent. An existing container
// must be partitioned on PartitionKeyPath.
func New(ctx context.Context, client *azcosmos.Client, database, container string, opts *Options) (*Driver, error) {
	if opts == nil {
		opts = &Options{}
	}
	var missing []string
	for _, arg := range []struct {
		what   string
		absent bool
	}{{"a client", client == nil}, {"a database name", database == ""}, {"a container name", container == ""}} {
		if arg.absent {
			missing = append(missing, arg.what)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cosmosdb: New needs %s", strings.Join(missing, " and "))
	}
	c, err := client.NewContainer(database, container)
	if err != nil {
		return nil, fmt.Errorf("cosmosdb: %w", err)
	}
	props, err := c.Read(ctx, nil)
	if statusOf(err) == 404 && !opts.SkipCreate {
		if err = create(ctx, client, database, container, opts.Throughput); err == nil {
			props, err = c.Read(ctx, nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cosmosdb: container %q in database %q: %w", container, database, err)
	}
	if p := props.ContainerProperties; p == nil || len(p.PartitionKeyDefinition.Paths) != 1 || p.PartitionKeyDefinition.Paths[0] != PartitionKeyPath {
		return nil, fmt.Errorf("cosmosdb: container %q must be partitioned on %s", container, PartitionKeyPath)
	}
	n := opts.CacheSize
	if n <= 0 {
		n = DefaultCacheSize
	}
	return &Driver{
		c:            c,
		files:        driver.NewHints[string, state](n),
		receipts:     driver.NewHints[string, state](n),
		history:      driver.NewHints[string, state](n),
		receiptParts: driver.NewHints[string, string](n),
		sessions:     driver.NewHints[string, string](n),
	}, nil
}

// ContainerProperties returns the properties New gives a container it
// creates: partition key PartitionKeyPath (hash version 2, so that long
// first path segments fit), DefaultTimeToLive -1 (per-item ttl on, no
// default expiry) and an index on the queried fields only.
func ContainerProperties(container string) azcosmos.ContainerProperties {
	ttl := int32(-1)
	return azcosmos.ContainerProperties{
		ID:                     container,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{PartitionKeyPath}, Version: 2},
		DefaultTimeToLive:      &ttl,
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic:    true,
			IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{
				{Path: "/pk/?"}, {Path: "/type/?"}, {Path: "/path/?"}, {Path: "/dir/?"}, {Path: "/tomb/?"},
			},
			ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}},
			// Search reads one scope ordered by path.
			CompositeIndexes: [][]azcosmos.CompositeIndex{{
				{Path: "/dir", Order: azcosmos.CompositeIndexAscending},
				{Path: "/path", Order: azcosmos.CompositeIndexAscending},
			}},
		},
	}
}

// create creates the database and the container, each unless it exists.
func create(ctx context.Context, client *azcosmos.Client, database, container string, tp *azcosmos.ThroughputProperties) error {
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: database}, nil); err != nil && statusOf(err) != 409 {
		return err
	}
	db, err := client.NewDatabase(database)
	if err != nil {
		return err
	}
	var o *azcosmos.CreateContainerOptions
	if tp != nil {
		o = &azcosmos.CreateContainerOptions{ThroughputProperties: tp}
	}
	if _, err = db.CreateContainer(ctx, ContainerProperties(container), o); statusOf(err) == 409 {
		return nil // created concurrently
	}
	return err
}

// Close implements driver.Driver. The client stays open; it belongs to
// the caller.
func (d *Driver) Close() error { return nil }

// Container returns the container client the driver uses.
func (d *Driver) Container() *azcosmos.ContainerClient { return d.c }

// statusOf returns the HTTP status of a Cosmos DB error, or 0.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// precondition maps a failed condition (409 Conflict on create, 412
// Precondition Failed on If-Match, 404 Not Found on a conditional replace
// or delete) to driver.ErrPrecondition, keeping the service's error in the
// chain. The driver calls it only for answers that prove nothing was
// written: conditional writes run without SDK retries (see send).
func precondition(err error) error {
	return fmt.Errorf("%w: %w", driver.ErrPrecondition, err)
}

// failure maps every other error of a write: 413 is driver.ErrTooLarge
// (nothing written), anything else is returned as is (its outcome is
// unknown to the store).
func failure(err error) error {
	if statusOf(err) == 413 {
		return fmt.Errorf("%w: %w", driver.ErrTooLarge, err)
	}
	return err
}
