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

	"github.com/agentmem/agentmem/contract"
	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// TestTooLarge: a file over DynamoDB's 400 KB item limit is ErrTooLarge on
// every path, and nothing is written: no row, no receipt, the old content
// intact.
func TestTooLarge(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	big := strings.Repeat("x", 400*1024)
	for _, mode := range []string{"full", "primitives"} {
		for _, withOp := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/op=%v", mode, withOp), func(t *testing.T) {
				t.Parallel()
				raw := newDriver(t, c, nil)
				var d driver.Driver = raw
				if mode == "primitives" {
					d = contract.Primitives(raw)
				}
				s := store.New(d, nil)
				var o1, o2 *store.Operation
				if withOp {
					o1, o2 = &store.Operation{ID: "op-create", Fingerprint: "fp"}, &store.Operation{ID: "op-update", Fingerprint: "fp"}
				}
				_, err := s.Write(t.Context(), store.WriteRequest{Path: "t/main/big.md", Content: big, Operation: o1})
				if !errors.Is(err, store.ErrTooLarge) {
					t.Fatalf("create: %v, want ErrTooLarge", err)
				}
				if _, err := s.Read(t.Context(), "t/main/big.md", 10); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read after refused create: %v", err)
				}
				m, err := s.Write(t.Context(), store.WriteRequest{Path: "t/main/small.md", Content: "small"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Write(t.Context(), store.WriteRequest{Path: "t/main/small.md", Content: big, Expected: m.Version, Operation: o2})
				if !errors.Is(err, store.ErrTooLarge) {
					t.Fatalf("update: %v, want ErrTooLarge", err)
				}
				f, err := s.Read(t.Context(), "t/main/small.md", 100)
				if err != nil || f.Content != "small" || f.Version != m.Version {
					t.Fatalf("after refused update: %+v, %v", f, err)
				}
				paths, err := s.ListPaths(t.Context(), "t/", 10)
				if err != nil || strings.Join(paths, ",") != "t/main/small.md" {
					t.Fatalf("listing %v, %v", paths, err)
				}
				if withOp {
					for _, o := range []*store.Operation{o1, o2} {
						r, err := raw.GetReceipt(t.Context(), o.ID)
						// The store (core/store mutateTracked) keeps a
						// pending receipt after a non-precondition error,
						// ErrTooLarge included; a replay settles it. The
						// atomic path leaves none.
						if err != nil || (r != nil && (mode == "full" || r.Completed)) {
							t.Fatalf("receipt %s left behind: %+v, %v", o.ID, r, err)
						}
					}
				}
			})
		}
	}
}

// TestTableSetup: New creates a missing table on demand with TTL, reuses an
// existing one, refuses to create with NoCreate and refuses a table with another key
// schema.
func TestTableSetup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newClient(t)
	d := newDriver(t, c, nil)
	desc, err := c.DescribeTable(ctx, &awsdynamodb.DescribeTableInput{TableName: aws.String(d.Table())})
	if err != nil {
		t.Fatal(err)
	}
	if desc.Table.TableStatus != types.TableStatusActive || desc.Table.BillingModeSummary == nil ||
		desc.Table.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Fatalf("created table: status %s, billing %+v", desc.Table.TableStatus, desc.Table.BillingModeSummary)
	}
	ttl, err := c.DescribeTimeToLive(ctx, &awsdynamodb.DescribeTimeToLiveInput{TableName: aws.String(d.Table())})
	if err != nil || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != dynamodb.TTLAttribute ||
		ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Fatalf("time to live: %+v, %v", ttl.TimeToLiveDescription, err)
	}
	noCreate := []*dynamodb.Options{{NoCreate: true}}
	// A second driver over the existing table (creation enabled or not)
	// reads and writes it.
	for _, opts := range append([]*dynamodb.Options{nil}, noCreate...) {
		d2, err := dynamodb.New(ctx, c, d.Table(), opts)
		if err != nil {
			t.Fatalf("New on an existing table (%+v): %v", opts, err)
		}
		s := store.New(d2, nil)
		if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/%p.md", opts), Content: "x"}); err != nil {
			t.Fatalf("write through New(%+v) on an existing table: %v", opts, err)
		}
	}

	for _, opts := range noCreate {
		missing := tableName(t) + "-missing"
		_, err = dynamodb.New(ctx, c, missing, opts)
		var notFound *types.ResourceNotFoundException
		if !errors.Is(err, store.ErrStoreNotFound) || !errors.As(err, &notFound) {
			t.Fatalf("New(%+v) on a missing table = %v; want store.ErrStoreNotFound wrapping ResourceNotFoundException", opts, err)
		}
		if !strings.HasPrefix(err.Error(), "dynamodb: ") {
			t.Errorf("New(%+v) on a missing table: %q does not start with %q", opts, err, "dynamodb: ")
		}
		if _, err := c.DescribeTable(ctx, &awsdynamodb.DescribeTableInput{TableName: &missing}); !errors.As(err, &notFound) {
			t.Fatalf("the table was created anyway: %v", err)
		}
	}

	other := tableName(t) + "-schema"
	t.Cleanup(func() { _, _ = c.DeleteTable(t.Context(), &awsdynamodb.DeleteTableInput{TableName: &other}) })
	if _, err := c.CreateTable(ctx, &awsdynamodb.CreateTableInput{
		TableName: &other, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := dynamodb.New(ctx, c, other, nil); err == nil || !strings.Contains(err.Error(), "key schema") {
		t.Fatalf("New on a table with another key schema: %v", err)
	}
}

// TestScopeReadsAreQueries: listing and searching one scope send Query
// requests only, whatever else the table holds; only a prefix spanning
// partitions scans.
func TestScopeReadsAreQueries(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 2} {
		t.Run(fmt.Sprint("depth", depth), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			n := newOpCounter()
			d := newDriver(t, newClient(t, n.middleware), &dynamodb.Options{PartitionDepth: depth})
			s := store.New(d, nil)
			paths := []string{"org/kamal/MEMORY.md", "org/kamal/sub/deep.md", "org/kamal/trips.md", "org/kamala/x.md", "org/top.md", "other/kamal/y.md", "root.md"}
			for i, p := range paths {
				var o *store.Operation
				if i%2 == 0 {
					o = &store.Operation{ID: "op-" + p, Fingerprint: "fp"}
				}
				if _, err := s.Write(ctx, store.WriteRequest{Path: p, Content: "kamal flies", Operation: o}); err != nil {
					t.Fatal(err)
				}
			}
			check := func(prefix string, want []string, wantOps ...string) {
				t.Helper()
				n.reset()
				got, err := s.ListPaths(ctx, prefix, 100)
				if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("ListPaths(%q) = %v, %v; want %v", prefix, got, err, want)
				}
				if ops := fmt.Sprint(n.snapshot()); ops != fmt.Sprint(opsMap(wantOps)) {
					t.Fatalf("ListPaths(%q) sent %v, want %v", prefix, ops, opsMap(wantOps))
				}
			}
			check("org/kamal/", paths[:3], "Query")
			check("org/kamal/t", paths[2:3], "Query")
			if depth == 1 {
				check("org/", paths[:5], "Query")
				check("org/kamal", paths[:4], "Query")
			} else {
				check("org/", paths[:5], "Scan")
			}
			check("", paths, "Scan")
			check("o", paths[:6], "Scan")

			n.reset()
			res, err := s.Search(ctx, search.Request{Prefix: "org/kamal/", Query: "kamal", Limit: 10, MaxFiles: 100, MaxChars: 1000, MaxFileChars: 100})
			if err != nil || len(res.Matches) != 2 || res.Scanned != 2 {
				t.Fatalf("search = %+v, %v", res, err)
			}
			// The folder's first search: one GetItem (its persisted term
			// index's manifest, none yet) and one Query for its files.
			if ops := n.snapshot(); len(ops) != 2 || ops["Query"] != 1 || ops["GetItem"] != 1 {
				t.Fatalf("search sent %v, want one Query and one GetItem", ops)
			}
			// Paging from After stays on the partition.
			n.reset()
			got, err := s.ListPaths(ctx, "org/kamal/", 1)
			if err != nil || len(got) != 1 {
				t.Fatal(got, err)
			}
			entries, err := d.ListFiles(ctx, driver.ListParams{Prefix: "org/kamal/", After: got[0], Limit: 10})
			if err != nil || len(entries) != 2 || entries[0].Path != paths[1] {
				t.Fatalf("ListFiles after %q = %+v, %v", got[0], entries, err)
			}
			if ops := n.snapshot(); len(ops) != 1 {
				t.Fatalf("paging sent %v", ops)
			}
		})
	}
}

func opsMap(ops []string) map[string]int {
	m := map[string]int{}
	for _, o := range ops {
		m[o]++
	}
	return m
}

// TestRetriedWriteIsNotPrecondition: when a conditional write lands but its
// reply is lost, the SDK retries it and the retry's condition fails. The
// driver must then recognise its own write, or report an unknown outcome,
// never driver.ErrPrecondition.
func TestRetriedWriteIsNotPrecondition(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	endpoint := emulator.Require(t, emulator.DynamoDBEndpoint)
	plain := newClient(t)
	d := newDriver(t, plain, nil)
	lossy := func(target string) (*dynamodb.Driver, *dropReply) {
		tr := &dropReply{inner: http.DefaultTransport, target: target}
		o := clientOptions(endpoint)
		o.HTTPClient = &http.Client{Transport: tr}
		d2, err := dynamodb.New(ctx, awsdynamodb.New(o), d.Table(), &dynamodb.Options{NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		return d2, tr
	}

	dc, tr := lossy("PutItem")
	f := driver.File{Path: "t/a.md", Content: "one", Version: "v1"}
	if err := dc.CreateFile(ctx, f); err != nil || !tr.dropped.Load() {
		t.Fatalf("create with a lost reply: %v (dropped %v)", err, tr.dropped.Load())
	}
	dr, _ := lossy("PutItem")
	f2 := driver.File{Path: "t/a.md", Content: "two", Version: "v2"}
	if err := dr.ReplaceFile(ctx, f2, "v1"); err != nil {
		t.Fatalf("replace with a lost reply: %v", err)
	}
	dd, tr := lossy("DeleteItem")
	err := dd.DeleteFile(ctx, "t/a.md", "v2")
	if !tr.dropped.Load() || errors.Is(err, driver.ErrPrecondition) || !errors.Is(err, dynamodb.ErrOutcomeUnknown) {
		t.Fatalf("delete with a lost reply: %v, want ErrOutcomeUnknown", err)
	}
	if !strings.HasPrefix(err.Error(), "dynamodb: ") {
		t.Errorf("delete with a lost reply: %q does not start with %q", err, "dynamodb: ")
	}
	if g, err := d.GetFile(ctx, "t/a.md"); err != nil || g != nil {
		t.Fatalf("file after delete: %+v, %v", g, err)
	}
	// The atomic path: the client request token makes the retry a no-op.
	dm, tr := lossy("TransactWriteItems")
	r := driver.Receipt{ID: "op-1", Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/b.md", Version: "v3", Completed: true, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	res, err := dm.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/b.md", Content: "three", Version: "v3", Receipt: &r})
	if err != nil || !tr.dropped.Load() {
		t.Fatalf("mutate with a lost reply: %+v, %v (dropped %v)", res, err, tr.dropped.Load())
	}
	if res.Existing != nil && res.Existing.Version != "v3" {
		t.Fatalf("mutate reports another receipt: %+v", res.Existing)
	}
	g, err := d.GetFile(ctx, "t/b.md")
	if err != nil || g == nil || g.Version != "v3" || g.OperationID != "op-1" {
		t.Fatalf("file after mutate: %+v, %v", g, err)
	}
	// A first-attempt condition failure is a precondition.
	if err := d.CreateFile(ctx, driver.File{Path: "t/b.md", Version: "v4"}); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("create over an existing row: %v", err)
	}
}

// TestMutateCancellationReasons: the transaction's cancellation reasons map
// to an existing receipt (checked first) or a precondition, and nothing is
// written in either case.
func TestMutateCancellationReasons(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := newDriver(t, newClient(t), nil)
	now := time.Now()
	rec := func(id, version string) *driver.Receipt {
		return &driver.Receipt{ID: id, Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/a.md", Version: version, Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	if _, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/a.md", Content: "one", Version: "v1", Receipt: rec("op-1", "v1")}); err != nil {
		t.Fatal(err)
	}
	// Same operation, stale expectation: the receipt answers.
	res, err := d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/a.md", Content: "two", Version: "v2", Expected: "stale", Receipt: rec("op-1", "v2")})
	if err != nil || res.Existing == nil || res.Existing.Version != "v1" || !res.Existing.Completed || res.Existing.Fingerprint != "fp" {
		t.Fatalf("replay = %+v, %v", res.Existing, err)
	}
	// New operation, stale expectation: a precondition, no receipt left.
	_, err = d.Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/a.md", Content: "two", Version: "v2", Expected: "stale", Receipt: rec("op-2", "v2")})
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale write: %v", err)
	}
	if r, err := d.GetReceipt(ctx, "op-2"); err != nil || r != nil {
		t.Fatalf("receipt of a cancelled transaction: %+v, %v", r, err)
	}
	// A delete that expects no file, while one exists.
	_, err = d.Mutate(ctx, driver.MutateParams{Kind: driver.KindDelete, Path: "t/a.md", Receipt: rec("op-3", "")})
	if !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("delete expecting absence: %v", err)
	}
	f, err := d.GetFile(ctx, "t/a.md")
	if err != nil || f.Content != "one" || f.Version != "v1" {
		t.Fatalf("file = %+v, %v", f, err)
	}
}

// TestConflictsAreRetried: a transaction cancelled by a concurrent one (or
// a single write refused by a transaction in progress) wrote nothing; the
// driver sends it again instead of failing.
func TestConflictsAreRetried(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	endpoint := emulator.Require(t, emulator.DynamoDBEndpoint)
	d := newDriver(t, newClient(t), nil)
	refusing := func(target, body string, n int32) *dynamodb.Driver {
		tr := &refuseOnce{inner: http.DefaultTransport, target: target, body: body}
		tr.count.Store(n)
		o := clientOptions(endpoint)
		o.HTTPClient = &http.Client{Transport: tr}
		d2, err := dynamodb.New(ctx, awsdynamodb.New(o), d.Table(), &dynamodb.Options{NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		return d2
	}
	const cancelled = `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","Message":"Transaction cancelled","CancellationReasons":[{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"},{"Code":"None"}]}`
	now := time.Now()
	r := driver.Receipt{ID: "op-1", Fingerprint: "fp", Kind: driver.KindWrite, Path: "t/a.md", Version: "v1", Completed: true, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	res, err := refusing("TransactWriteItems", cancelled, 2).Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/a.md", Content: "one", Version: "v1", Receipt: &r})
	if err != nil || res.Existing != nil {
		t.Fatalf("mutate after two conflicts: %+v, %v", res, err)
	}
	// Persistent conflicts end in an error that is not a precondition.
	r2 := r
	r2.ID, r2.Version = "op-2", "v2"
	_, err = refusing("TransactWriteItems", cancelled, 100).Mutate(ctx, driver.MutateParams{Kind: driver.KindWrite, Path: "t/a.md", Content: "two", Version: "v2", Expected: "v1", Receipt: &r2})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("mutate under persistent conflicts: %v", err)
	}
	const inProgress = `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException","message":"Transaction is ongoing for the item"}`
	if err := refusing("PutItem", inProgress, 1).ReplaceFile(ctx, driver.File{Path: "t/a.md", Content: "three", Version: "v3"}, "v1"); err != nil {
		t.Fatalf("replace after a conflict: %v", err)
	}
	// A definite refusal followed by a failed condition is a precondition.
	if err := refusing("PutItem", inProgress, 1).ReplaceFile(ctx, driver.File{Path: "t/a.md", Version: "v4"}, "v1"); !errors.Is(err, driver.ErrPrecondition) {
		t.Fatalf("stale replace after a conflict: %v", err)
	}
	f, err := d.GetFile(ctx, "t/a.md")
	if err != nil || f.Version != "v3" || f.Content != "three" {
		t.Fatalf("file = %+v, %v", f, err)
	}
}
