package cosmosdb

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

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
