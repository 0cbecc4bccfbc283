package dynamodb_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/dynamodb"
)

// clientOptions configures a test client for the emulator endpoint:
// static letters-only credentials, us-east-1.
func clientOptions(endpoint string) awsdynamodb.Options {
	return awsdynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("agentmemKey", "agentmemSecret", ""),
	}
}

// newClient returns a client for the emulator, with optional extra
// middleware.
func newClient(tb testing.TB, apiOptions ...func(*middleware.Stack) error) *awsdynamodb.Client {
	tb.Helper()
	o := clientOptions(emulator.Require(tb, emulator.DynamoDBEndpoint))
	o.APIOptions = append(o.APIOptions, apiOptions...)
	return awsdynamodb.New(o)
}

var tableSeq atomic.Int64

// tableName returns a table name unique to this process and test.
func tableName(tb testing.TB) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '.'
	}, tb.Name())
	if len(name) > 180 {
		name = name[len(name)-180:]
	}
	return fmt.Sprintf("am%d-%d-%s", time.Now().UnixNano()%1e9, tableSeq.Add(1), name)
}

// newDriver creates a driver over a fresh table and deletes the table when
// the test ends.
func newDriver(tb testing.TB, c *awsdynamodb.Client, opts *dynamodb.Options) *dynamodb.Driver {
	tb.Helper()
	table := tableName(tb)
	tb.Cleanup(func() {
		_, _ = c.DeleteTable(context.WithoutCancel(tb.Context()), &awsdynamodb.DeleteTableInput{TableName: &table})
	})
	d, err := dynamodb.New(tb.Context(), c, table, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// opCounter counts the HTTP attempts per DynamoDB operation (each retry
// counts) through a Deserialize middleware.
type opCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func newOpCounter() *opCounter { return &opCounter{counts: map[string]int{}} }

// middleware returns the APIOptions entry that installs the counter.
func (c *opCounter) middleware(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("test.count",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.counts[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleDeserialize(ctx, in)
		}), middleware.Before)
}

func (c *opCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}

func (c *opCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

func (c *opCounter) total() int {
	n := 0
	for _, v := range c.snapshot() {
		n += v
	}
	return n
}

var _ http.RoundTripper = (*dropReply)(nil)

// dropReply is an HTTP transport that lets the first request whose
// X-Amz-Target ends with target reach the server, then loses its reply
// (returns a connection error), so the SDK retries it.
type dropReply struct {
	inner   http.RoundTripper
	target  string
	dropped atomic.Bool
}

type resetError struct{}

func (resetError) Error() string   { return "test: connection reset after the request was applied" }
func (resetError) Timeout() bool   { return false }
func (resetError) Temporary() bool { return true }

func (t *dropReply) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+t.target) && t.dropped.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, resetError{}
	}
	return resp, err
}

// refuseOnce is an HTTP transport that answers the first count requests
// whose X-Amz-Target ends with target itself, with HTTP 400 and body, as
// DynamoDB answers a refused request; the rest reach the server.
type refuseOnce struct {
	inner  http.RoundTripper
	target string
	body   string
	count  atomic.Int32
}

func (t *refuseOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+t.target) && t.count.Add(-1) >= 0 {
		if r.Body != nil {
			r.Body.Close()
		}
		return &http.Response{
			StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"test"}},
			Body:    io.NopCloser(strings.NewReader(t.body)),
			Request: r,
		}, nil
	}
	return t.inner.RoundTrip(r)
}
