package dynamodb_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// TestHistoryLayout: with history on, a write is still one request (a
// TransactWriteItems that carries the entry), the entry is an item of the
// history partition with the TTL attribute, a file's or a user's history
// is one Query, listings never show entries, and forgetting a user's
// history removes it in batches of 25 (Query + BatchWriteItem), or with a
// Scan for a prefix spanning partitions.
func TestHistoryLayout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	n := newOpCounter()
	c := newClient(t, n.middleware)
	d := newDriver(t, c, nil)
	s := store.New(d, &store.Options{History: &store.HistoryOptions{Retention: time.Hour}})
	const path = "org/kamal/MEMORY.md"
	m, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "one\n"})
	if err != nil {
		t.Fatal(err)
	}
	n.reset()
	m2, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "two\n", Expected: m.Version, Operation: &store.Operation{ID: "op-2", Fingerprint: "fp"}})
	if err != nil {
		t.Fatal(err)
	}
	if ops := n.snapshot(); len(ops) != 1 || ops["TransactWriteItems"] != 1 {
		t.Fatalf("an idempotent write with history sent %v, want one TransactWriteItems", ops)
	}
	n.reset()
	if _, err := s.Write(ctx, store.WriteRequest{Path: path, Content: "three\n", Expected: m2.Version}); err != nil {
		t.Fatal(err)
	}
	if ops := n.snapshot(); len(ops) != 1 || ops["TransactWriteItems"] != 1 {
		t.Fatalf("a plain write with history sent %v, want one TransactWriteItems", ops)
	}
	raw, err := c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "#h#org/"}, "sk": &types.AttributeValueMemberS{Value: driver.HistoryKey(path, m2.Version)},
	}})
	if err != nil || raw.Item == nil {
		t.Fatalf("the entry's item: %v, %v", raw, err)
	}
	ttl, ok := raw.Item[dynamodb.TTLAttribute].(*types.AttributeValueMemberN)
	if !ok || ttl.Value == "" {
		t.Fatalf("the entry carries no %s: %v", dynamodb.TTLAttribute, raw.Item)
	}

	for _, p := range []string{"org/kamal/notes.md", "org/other/a.md", "top.md"} {
		if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "x\n"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, req := range []store.HistoryRequest{{Path: path, Limit: 10}, {Prefix: "org/kamal/", Limit: 10}, {Path: "top.md", Limit: 10}} {
		n.reset()
		page, err := s.History(ctx, req)
		if err != nil || len(page.Entries) == 0 {
			t.Fatalf("History(%+v) = %+v, %v", req, page, err)
		}
		if ops := n.snapshot(); len(ops) != 1 || ops["Query"] != 1 {
			t.Fatalf("History(%+v) sent %v, want one Query", req, ops)
		}
	}
	page, err := s.History(ctx, store.HistoryRequest{Prefix: "org/kamal/", Limit: 10})
	if err != nil || len(page.Entries) != 4 || page.Entries[0].Content != "three\n" || page.Entries[3].Path != "org/kamal/notes.md" {
		t.Fatalf("history of org/kamal/: %+v, %v", page, err)
	}
	// Listings spanning partitions scan the table and leave entries out.
	for _, prefix := range []string{"", "o", "t"} {
		paths, err := s.ListPaths(ctx, prefix, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.Contains(p, " ") {
				t.Fatalf("ListPaths(%q) shows a history entry: %q", prefix, paths)
			}
		}
	}
	// A cross-partition history prefix scans.
	all, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "o", Limit: 100})
	if err != nil || len(all) != 5 {
		t.Fatalf("ListHistory(o) = %d entries, %v", len(all), err)
	}

	// 60 more entries: forgetting org/kamal/ removes all 64, 25 per request.
	v := m2.Version
	for i := range 60 {
		f, err := s.Read(ctx, path, 10)
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Write(ctx, store.WriteRequest{Path: path, Content: fmt.Sprintf("%d\n", i), Expected: f.Version})
		if err != nil {
			t.Fatal(err)
		}
		v = w.Version
	}
	_ = v
	n.reset()
	removed, err := s.ForgetHistory(ctx, "org/kamal/")
	if err != nil || removed != 64 {
		t.Fatalf("ForgetHistory = %d, %v; want 64", removed, err)
	}
	if ops := n.snapshot(); ops["BatchWriteItem"] != 3 || ops["Scan"] != 0 {
		t.Fatalf("ForgetHistory sent %v, want 3 BatchWriteItem and no Scan", ops)
	}
	if page, err := s.History(ctx, store.HistoryRequest{Prefix: "org/", Limit: 10}); err != nil || len(page.Entries) != 1 || page.Entries[0].Path != "org/other/a.md" {
		t.Fatalf("history of org/ after forgetting org/kamal/: %+v, %v", page, err)
	}
	n.reset()
	if removed, err := s.ForgetHistory(ctx, "or"); err != nil || removed != 1 {
		t.Fatalf("ForgetHistory(or) = %d, %v; want 1", removed, err)
	}
	if ops := n.snapshot(); ops["Scan"] == 0 {
		t.Fatalf("ForgetHistory(or) sent %v, want a Scan", ops)
	}
	if all, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "", Limit: 100}); err != nil || len(all) != 1 || all[0].Path != "top.md" {
		t.Fatalf("entries left: %+v, %v", all, err)
	}
}

// TestHistoryEntryRoundTrip: every field of an entry is stored, pending
// entries complete and drop as the Historian promises, and an entry whose
// key would pass DynamoDB's sort-key limit is ErrTooLarge, with nothing
// written.
func TestHistoryEntryRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := newDriver(t, newClient(t), nil)
	now := time.Now()
	e := driver.HistoryEntry{Path: "u/a.md", Version: "01JB0000000000000000000000~op-1", Previous: "01J9000000000000000000000", Kind: driver.KindWrite,
		OperationID: "op-1", Metadata: map[string]string{"updated_by": "u1", "run": "r"}, Content: "hello\n", Time: now, ExpiresAt: now.Add(time.Hour), Pending: true}
	if err := d.PutHistory(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := d.PutHistory(ctx, e); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("second put: %v, want ErrPrecondition", err)
	}
	got, err := d.GetHistory(ctx, e.Path, e.Version)
	if err != nil || got == nil {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if got.Path != e.Path || got.Version != e.Version || got.Previous != e.Previous || got.Kind != e.Kind || got.OperationID != e.OperationID ||
		fmt.Sprint(got.Metadata) != fmt.Sprint(e.Metadata) || got.Content != e.Content || !got.Time.Equal(e.Time) ||
		got.ExpiresAt.Before(e.ExpiresAt) || got.ExpiresAt.After(e.ExpiresAt.Add(time.Second)) || !got.Pending {
		t.Fatalf("get = %+v, want %+v", got, e)
	}
	// Another version with the same 26-character stem is another entry.
	if g, err := d.GetHistory(ctx, e.Path, "01JB0000000000000000000000"); err != nil || g != nil {
		t.Fatalf("get of another version with the stem: %+v, %v", g, err)
	}
	if err := d.DropHistory(ctx, e.Path, "01JB0000000000000000000000"); err != nil {
		t.Fatalf("drop of another version with the stem: %v", err)
	}
	if err := d.CompleteHistory(ctx, e.Path, "01JB0000000000000000000000"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete of another version with the stem: %v", err)
	}
	for range 2 {
		if err := d.CompleteHistory(ctx, e.Path, e.Version); err != nil {
			t.Fatalf("complete: %v", err)
		}
	}
	if err := d.DropHistory(ctx, e.Path, e.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("drop of a complete entry: %v", err)
	}
	if g, err := d.GetHistory(ctx, e.Path, e.Version); err != nil || g == nil || g.Pending {
		t.Fatalf("after completion: %+v, %v", g, err)
	}
	p := e
	p.Version, p.Pending = "01JC0000000000000000000000", true
	if err := d.PutHistory(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := d.DropHistory(ctx, p.Path, p.Version); err != nil {
		t.Fatalf("drop of a pending entry: %v", err)
	}
	if err := d.DropHistory(ctx, p.Path, p.Version); err != nil {
		t.Fatalf("drop of a missing entry: %v", err)
	}
	if err := d.CompleteHistory(ctx, p.Path, p.Version); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("complete of a missing entry: %v", err)
	}

	// A path whose file fits a sort key but whose history key does not.
	long := "u/" + strings.Repeat(strings.Repeat("a", 199)+"/", 5) + "x.md" // 1,006 bytes
	s := store.New(d, &store.Options{History: &store.HistoryOptions{}})
	if _, err := s.Write(ctx, store.WriteRequest{Path: long, Content: "x"}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("write of a path too long for its history: %v, want ErrTooLarge", err)
	}
	if f, err := d.GetFile(ctx, long); err != nil || f != nil {
		t.Fatalf("file after a refused write: %+v, %v", f, err)
	}
	m, err := store.New(d, nil).Write(ctx, store.WriteRequest{Path: long, Content: "x"})
	if err != nil {
		t.Fatalf("the same write without history: %v", err)
	}
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: long, Expected: m.Version}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("delete of a path too long for its history: %v, want ErrTooLarge", err)
	}
	if f, err := d.GetFile(ctx, long); err != nil || f == nil || f.Version != m.Version {
		t.Fatalf("file after a refused delete: %+v, %v", f, err)
	}
}

// TestHistoryRetriedCalls: when a history call lands but its reply is
// lost, the SDK's retry finds its own work and succeeds; the mutation's
// transaction is idempotent by its client request token.
func TestHistoryRetriedCalls(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	endpoint := emulator.Require(t, emulator.DynamoDBEndpoint)
	d := newDriver(t, newClient(t), nil)
	lossy := func(target string) *dynamodb.Driver {
		o := clientOptions(endpoint)
		o.HTTPClient = &http.Client{Transport: &dropReply{inner: http.DefaultTransport, target: target}}
		d2, err := dynamodb.New(ctx, awsdynamodb.New(o), d.Table(), &dynamodb.Options{NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		return d2
	}
	now := time.Now()
	e := driver.HistoryEntry{Path: "t/a.md", Version: "01JB0000000000000000000000", Kind: driver.KindWrite, Content: "one", Time: now, ExpiresAt: now.Add(time.Hour), Pending: true}
	if err := lossy("PutItem").PutHistory(ctx, e); err != nil {
		t.Fatalf("put with a lost reply: %v", err)
	}
	if err := lossy("UpdateItem").CompleteHistory(ctx, e.Path, e.Version); err != nil {
		t.Fatalf("complete with a lost reply: %v", err)
	}
	e2 := e
	e2.Version = "01JC0000000000000000000000"
	if err := d.PutHistory(ctx, e2); err != nil {
		t.Fatal(err)
	}
	if err := lossy("DeleteItem").DropHistory(ctx, e2.Path, e2.Version); err != nil {
		t.Fatalf("drop with a lost reply: %v", err)
	}
	h := driver.HistoryEntry{Path: "t/b.md", Version: "01JD0000000000000000000000", Kind: driver.KindWrite, Content: "b", Time: now, ExpiresAt: now.Add(time.Hour)}
	r := driver.Receipt{ID: "op-b", Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/b.md", Version: h.Version, Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if _, err := lossy("TransactWriteItems").Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/b.md", Content: "b", Version: h.Version, Receipt: &r, History: &h}); err != nil {
		t.Fatalf("mutate with a lost reply: %v", err)
	}
	entries, err := d.ListHistory(ctx, driver.HistoryParams{Prefix: "t/", Limit: 10})
	if err != nil || len(entries) != 2 || entries[0].Version != e.Version || entries[0].Pending || entries[1].Version != h.Version {
		t.Fatalf("entries = %+v, %v", entries, err)
	}
}
