package dynamodb

import (
	"context"
	"hash"
	"hash/crc32"
	"io"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

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
	noCreate, err := driver.NoCreate(u)
	if err != nil {
		return nil, err
	}
	opts.NoCreate = noCreate
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
		opts.NoCreate = opts.NoCreate || !create
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

// sdkChecksumID is the id of the SDK's response CRC32 check in the
// Deserialize step (service/dynamodb/internal/customizations).
const sdkChecksumID = "DynamoDB:ResponseChecksumValidation"

// checkPresentCRC32 is the client option store.Open's client gets: the
// SDK's check of the X-Amz-Crc32 response header is replaced, at the same
// place in the stack, by one that checks the CRC32 of every response that
// carries the header and leaves a response without one alone.
//
// The SDK's check compares the body with 0 when the header is absent, and
// its failure only ever reaches the log ("failed to close HTTP response
// body, this may affect connection reuse: response did not match expected
// checksum, 0, N"): the body has been read to its end by then and the
// connection is reused. DynamoDB Local answers every error (HTTP 400: a
// failed condition, a cancelled transaction, a missing table) without the
// header, so each of them logged that warning; its successes carry a
// correct CRC32 (TestResponseChecksums). A response whose header is present
// and wrong is reported with the SDK's words ("response did not match
// expected checksum, WANT, GOT") after this package's prefix.
func checkPresentCRC32(o *awsdynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		if _, ok := s.Deserialize.Get(sdkChecksumID); !ok {
			return nil // the caller turned the check off (DisableValidateResponseChecksum)
		}
		_, err := s.Deserialize.Swap(sdkChecksumID, presentCRC32{})
		return err
	})
}

// presentCRC32 checks a response body against its X-Amz-Crc32 header when
// the header is present.
type presentCRC32 struct{}

func (presentCRC32) ID() string { return sdkChecksumID }

func (presentCRC32) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.Body == nil {
		return out, md, err
	}
	v := resp.Header.Get("X-Amz-Crc32")
	if v == "" {
		return out, md, err
	}
	want, perr := strconv.ParseUint(v, 10, 32)
	if perr != nil {
		return out, md, errorf("the response's X-Amz-Crc32 header %q is not a CRC32: %w", v, perr)
	}
	h := crc32.NewIEEE()
	resp.Body = &crc32Body{Reader: io.TeeReader(resp.Body, h), body: resp.Body, hash: h, want: uint32(want)}
	return out, md, err
}

// crc32Body computes the CRC32 of what is read through it and compares it
// with want on Close.
type crc32Body struct {
	io.Reader
	body io.Closer
	hash hash.Hash32
	want uint32
}

func (b *crc32Body) Close() error {
	err := b.body.Close()
	if got := b.hash.Sum32(); got != b.want {
		return errorf("response did not match expected checksum, %d, %d", b.want, got)
	}
	return err
}
