package dynamodb_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// TestLifetimeIsMetadataNotTTL: a file's expiry lives in its metadata
// attribute only, never in TTLAttribute (the store records the expiry as a
// delete in the history; a TTL would delete the row silently), on both
// paths; listings read it from the metadata, and a user key that only
// differs in case from a store-owned key is no lifetime.
func TestLifetimeIsMetadataNotTTL(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, mode := range []string{"full", "primitives"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			raw := newDriver(t, c, nil)
			var d driver.Driver = raw
			if mode == "primitives" {
				d = contract.Primitives(raw)
			}
			s := store.New(d, nil)
			at := time.Now().Add(time.Hour)
			if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/a.md", Content: "a", ExpiresAt: at}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/b.md", Content: "b", Metadata: map[string]string{"Agentmem:Expires": "2000-01-01T00:00:00.000Z"}}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"u/a.md", "u/b.md"} {
				out, err := c.GetItem(t.Context(), &awsdynamodb.GetItemInput{
					TableName:      aws.String(raw.Table()),
					Key:            map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "u/"}, "sk": &types.AttributeValueMemberS{Value: p}},
					ConsistentRead: aws.Bool(true),
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Item) == 0 {
					t.Fatalf("no item at %s", p)
				}
				if _, ok := out.Item[dynamodb.TTLAttribute]; ok {
					t.Fatalf("%s carries %s: a live file must never expire by TTL", p, dynamodb.TTLAttribute)
				}
			}
			entries, err := raw.ListFiles(t.Context(), driver.ListParams{Prefix: "u/", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			want := []driver.Lifetime{{Expires: driver.FormatExpiry(at)}, {}}
			if len(entries) != 2 || entries[0].Lifetime != want[0] || entries[1].Lifetime != want[1] {
				t.Fatalf("ListFiles = %+v, want lifetimes %+v", entries, want)
			}
		})
	}
}
