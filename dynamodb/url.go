package dynamodb

import (
	"context"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

func init() { store.Register("dynamodb", openURL) }

// openURL opens "dynamodb://TABLE" with the parameters region, endpoint,
// partition_depth and create_table, on the SDK's default configuration
// (credentials from its usual chain).
func openURL(ctx context.Context, u *url.URL) (driver.Driver, error) {
	if u.Opaque != "" || u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") || u.Host == "" {
		return nil, driver.URLError(u, "write dynamodb://TABLE (the table name is the host; credentials come from the AWS SDK's default chain)")
	}
	if err := driver.CheckQuery(u, "region", "endpoint", "partition_depth", "create_table"); err != nil {
		return nil, err
	}
	q := u.Query()
	opts := &Options{}
	if v := q.Get("partition_depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, driver.URLError(u, "partition_depth must be a positive integer")
		}
		opts.PartitionDepth = n
	}
	if v := q.Get("create_table"); v != "" {
		create, err := strconv.ParseBool(v)
		if err != nil {
			return nil, driver.URLError(u, "create_table must be true or false")
		}
		opts.DisableCreateTable = !create
	}
	var load []func(*config.LoadOptions) error
	if r := q.Get("region"); r != "" {
		load = append(load, config.WithRegion(r))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, errorf("load the AWS configuration (environment, shared config files): %w", err)
	}
	client := []func(*awsdynamodb.Options){checkPresentCRC32}
	if e := q.Get("endpoint"); e != "" {
		if p, err := url.Parse(e); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, driver.URLError(u, "endpoint must be an http:// or https:// URL such as http://localhost:8000")
		}
		client = append(client, func(o *awsdynamodb.Options) { o.BaseEndpoint = aws.String(e) })
	}
	return New(ctx, awsdynamodb.NewFromConfig(cfg, client...), u.Hostname(), opts)
}
