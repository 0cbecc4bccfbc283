package cosmosdb_test

import (
	"errors"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/cosmosdb"
)

// TestNoCreate checks that Options.NoCreate makes New fail with store.ErrStoreNotFound when the
// database or the container is absent, creating neither.
func TestNoCreate(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	for _, o := range []*cosmosdb.Options{{NoCreate: true}} {
		if _, err := cosmosdb.New(ctx, db.client, db.name, "absent", o); !errors.Is(err, store.ErrStoreNotFound) {
			t.Errorf("New(%+v) without the database = %v, want store.ErrStoreNotFound", o, err)
		}
	}
	dbc, err := db.client.NewDatabase(db.name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbc.Read(ctx, nil); err == nil {
		t.Fatal("NoCreate created the database")
	}
	d := db.newDriver(t) // creates the database
	for _, o := range []*cosmosdb.Options{{NoCreate: true}} {
		if _, err := cosmosdb.New(ctx, db.client, db.name, "absent", o); !errors.Is(err, store.ErrStoreNotFound) {
			t.Errorf("New(%+v) without the container = %v, want store.ErrStoreNotFound", o, err)
		}
	}
	c, err := dbc.NewContainer("absent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(ctx, nil); err == nil {
		t.Fatal("NoCreate created the container")
	}
	if _, err := cosmosdb.New(ctx, db.client, db.name, d.Container().ID(), &cosmosdb.Options{NoCreate: true}); err != nil {
		t.Fatalf("NoCreate over an existing container: %v", err)
	}
}

// TestCacheSize counts the requests of a replace right after the create:
// with the ETag cache (CacheSize 0, the default size, or 1) it is one
// ReplaceItem with the cached ETag; with a negative CacheSize the cache is
// off, so the driver reads the item first.
func TestCacheSize(t *testing.T) {
	db := newDatabase(t)
	ctx := t.Context()
	id := db.newDriver(t).Container().ID()
	for size, want := range map[int]int64{0: 1, 1: 1, -1: 2} {
		rq := &requests{}
		d, err := cosmosdb.New(ctx, newClient(t, rq), db.name, id, &cosmosdb.Options{NoCreate: true, CacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		path := "t/" + string(rune('a'+size+1)) + ".md"
		if err := d.CreateFile(ctx, driver.File{Path: path, Content: "one", Version: "v1"}); err != nil {
			t.Fatal(err)
		}
		before := rq.count()
		if err := d.ReplaceFile(ctx, driver.File{Path: path, Content: "two", Version: "v2"}, "v1"); err != nil {
			t.Fatal(err)
		}
		if n := rq.count() - before; n != want {
			t.Errorf("CacheSize %d: the replace took %d requests, want %d", size, n, want)
		}
		if f, err := d.GetFile(ctx, path); err != nil || f == nil || f.Content != "two" {
			t.Errorf("CacheSize %d: GetFile = %+v, %v", size, f, err)
		}
	}
}
