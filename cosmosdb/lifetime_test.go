package cosmosdb_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// TestLifetimeAcrossPartitions checks what the contract's lifetime cases
// do not reach: a listing that fans out over partitions (a prefix without
// "/") returns each file's lifetime too, and a file's expiry never becomes
// a ttl on its item, whether Mutate or the primitives wrote it.
func TestLifetimeAcrossPartitions(t *testing.T) {
	db := newDatabase(t)
	for _, mode := range []string{"full", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			d := db.newDriver(t)
			var dd driver.Driver = d
			if mode == "primitives" {
				dd = contract.Primitives(d)
			}
			s := store.New(dd, nil)
			at := time.Now().Add(time.Hour)
			for _, w := range []store.WriteRequest{
				{Path: "a/x.md", Content: "x", ExpiresAt: at},
				{Path: "b/y.md", Content: "y", Pinned: true},
				{Path: "top.md", Content: "z", ExpiresAt: at, Operation: &store.Operation{ID: "op-" + mode, Fingerprint: "fp"}},
			} {
				if _, err := s.Write(t.Context(), w); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]driver.Lifetime{
				"a/x.md": {Expires: driver.FormatExpiry(at)},
				"b/y.md": {Pinned: "true"},
				"top.md": {Expires: driver.FormatExpiry(at)},
			}
			entries, err := d.ListFiles(t.Context(), driver.ListParams{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(want) {
				t.Fatalf("ListFiles = %+v, want %d entries", entries, len(want))
			}
			for _, e := range entries {
				if e.Lifetime != want[e.Path] {
					t.Errorf("%s: lifetime %+v, want %+v", e.Path, e.Lifetime, want[e.Path])
				}
			}
			for _, it := range rawItems(t, d) {
				if _, ok := it["ttl"]; ok && it["type"] == "file" {
					t.Errorf("file item %v has a ttl: a file's expiry is the store's, never Cosmos DB's", it["path"])
				}
			}
		})
	}
}
