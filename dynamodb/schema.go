package dynamodb

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
