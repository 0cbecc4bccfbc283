package dynamodb

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// DefaultCreateTimeout bounds how long New waits for a table it creates to
// become ACTIVE.
const DefaultCreateTimeout = 5 * time.Minute

// Options configures New. The zero value (or nil) means defaults.
type Options struct {
	// DisableCreateTable stops New from creating the table and enabling its
	// time to live. The table must then exist with the key schema pk
	// (HASH, String) + sk (RANGE, String); enable TTL on TTLAttribute
	// yourself if receipts, tombstones and history entries should expire.
	DisableCreateTable bool
	// PartitionDepth is how many leading directory segments of a path form
	// its partition key (default 1: "kamal/main/MEMORY.md" lives in
	// partition "kamal/"). Listing a prefix that names at least this many
	// directories is one Query; shorter prefixes fall back to a Scan.
	// Raise it when one top-level segment holds many tenants
	// ("org/user/…" → 2). It is part of the table's layout: use the same
	// value for the table's whole life.
	PartitionDepth int
	// CreateTimeout bounds the wait for a created table to become ACTIVE
	// (default DefaultCreateTimeout).
	CreateTimeout time.Duration
}

// Driver stores agentmem files, receipts and history entries in one
// DynamoDB table. It is safe for concurrent use. Create it with New.
type Driver struct {
	c     *awsdynamodb.Client
	table string
	l     layout
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Mutator     = (*Driver)(nil)
	_ driver.BatchGetter = (*Driver)(nil)
	_ driver.ScopeReader = (*Driver)(nil)
)

// New returns a driver over table, using the caller's configured client.
// Unless opts.DisableCreateTable is set it creates the table when missing
// (on-demand capacity, PAY_PER_REQUEST), waits until it is ACTIVE and
// enables time to live on TTLAttribute. It fails when the table's key
// schema is not pk (HASH, S) + sk (RANGE, S).
func New(ctx context.Context, client *awsdynamodb.Client, table string, opts *Options) (*Driver, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.PartitionDepth <= 0 {
		o.PartitionDepth = 1
	}
	if o.CreateTimeout <= 0 {
		o.CreateTimeout = DefaultCreateTimeout
	}
	if client == nil || table == "" {
		return nil, errorf("New needs a client and a table name")
	}
	d := &Driver{c: client, table: table, l: layout{depth: o.PartitionDepth}}
	desc, err := d.describe(ctx)
	var missing *types.ResourceNotFoundException
	switch {
	case errors.As(err, &missing) && o.DisableCreateTable:
		return nil, errorf("table %q does not exist and Options.DisableCreateTable is set: %w", table, err)
	case errors.As(err, &missing):
		if desc, err = d.create(ctx, o.CreateTimeout); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, errorf("describe table %q: %w", table, err)
	}
	if err := checkKeySchema(desc); err != nil {
		return nil, errorf("table %q: %w", table, err)
	}
	if desc.TableStatus != types.TableStatusActive {
		if desc, err = d.waitActive(ctx, o.CreateTimeout); err != nil {
			return nil, err
		}
	}
	if !o.DisableCreateTable {
		if err := d.enableTTL(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Table returns the table name.
func (d *Driver) Table() string { return d.table }

// Client returns the client the driver uses.
func (d *Driver) Client() *awsdynamodb.Client { return d.c }

func (d *Driver) describe(ctx context.Context) (*types.TableDescription, error) {
	out, err := d.c.DescribeTable(ctx, &awsdynamodb.DescribeTableInput{TableName: &d.table})
	if err != nil {
		return nil, err
	}
	return out.Table, nil
}

// create creates the table (another process may be creating it too) and
// waits until it is ACTIVE.
func (d *Driver) create(ctx context.Context, timeout time.Duration) (*types.TableDescription, error) {
	_, err := d.c.CreateTable(ctx, &awsdynamodb.CreateTableInput{
		TableName:   &d.table,
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrSK), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return nil, errorf("create table %q: %w", d.table, err)
	}
	return d.waitActive(ctx, timeout)
}

func (d *Driver) waitActive(ctx context.Context, timeout time.Duration) (*types.TableDescription, error) {
	w := awsdynamodb.NewTableExistsWaiter(d.c, func(o *awsdynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	out, err := w.WaitForOutput(ctx, &awsdynamodb.DescribeTableInput{TableName: &d.table}, timeout)
	if err != nil {
		return nil, errorf("wait for table %q to become ACTIVE: %w", d.table, err)
	}
	return out.Table, nil
}

// enableTTL turns on time to live on TTLAttribute unless it is on.
func (d *Driver) enableTTL(ctx context.Context) error {
	out, err := d.c.DescribeTimeToLive(ctx, &awsdynamodb.DescribeTimeToLiveInput{TableName: &d.table})
	if err != nil {
		return errorf("describe time to live of %q: %w", d.table, err)
	}
	if t := out.TimeToLiveDescription; t != nil && aws.ToString(t.AttributeName) == TTLAttribute &&
		(t.TimeToLiveStatus == types.TimeToLiveStatusEnabled || t.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = d.c.UpdateTimeToLive(ctx, &awsdynamodb.UpdateTimeToLiveInput{
		TableName:               &d.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return errorf("enable time to live on %q.%s: %w", d.table, TTLAttribute, err)
	}
	return nil
}

var errKeySchema = errors.New("key schema must be " + attrPK + " (HASH, S) + " + attrSK + " (RANGE, S)")

func checkKeySchema(t *types.TableDescription) error {
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, a := range t.AttributeDefinitions {
		attrTypes[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	want := map[types.KeyType]string{types.KeyTypeHash: attrPK, types.KeyTypeRange: attrSK}
	if len(t.KeySchema) != len(want) {
		return errKeySchema
	}
	for _, k := range t.KeySchema {
		name := aws.ToString(k.AttributeName)
		if want[k.KeyType] != name || attrTypes[name] != types.ScalarAttributeTypeS {
			return errKeySchema
		}
	}
	return nil
}

// Close implements driver.Driver. The client belongs to the caller; Close
// releases nothing.
func (d *Driver) Close() error { return nil }
