package dynamodb_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentmem/agentmem/contract/emulator"
	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// TestOpenURL opens DynamoDB Local by store URL, with credentials from the
// environment (the SDK's default chain), and writes and reads through it.
func TestOpenURL(t *testing.T) {
	endpoint := emulator.Require(t, emulator.DynamoDBEndpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "agentmemKey")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "agentmemSecret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	table := tableName(t)
	c := newClient(t)
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.WithoutCancel(t.Context()), &awsdynamodb.DeleteTableInput{TableName: &table})
	})
	u := "dynamodb://" + table + "?region=us-east-1&partition_depth=2&endpoint=" + url.QueryEscape(endpoint)
	s, err := store.Open(t.Context(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Driver().(*dynamodb.Driver).Table(); got != table {
		t.Errorf("table %q, want %q", got, table)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/a.md", Content: "by URL"}); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Read(t.Context(), "u/main/a.md", 100); err != nil || f.Content != "by URL" {
		t.Fatalf("read = %+v, %v", f, err)
	}
	// The table exists now, so create_table=false opens it too.
	s2, err := store.Open(t.Context(), "dynamodb://"+table+"?region=us-east-1&partition_depth=2&create_table=false&endpoint="+url.QueryEscape(endpoint), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if f, err := s2.Read(t.Context(), "u/main/a.md", 100); err != nil || f.Content != "by URL" {
		t.Fatalf("read through a second URL = %+v, %v", f, err)
	}
	// create_table=false is Options.NoCreate: a missing table is not created.
	if _, err := store.Open(t.Context(), "dynamodb://"+table+"-missing?region=us-east-1&create_table=false&endpoint="+url.QueryEscape(endpoint), nil); !errors.Is(err, store.ErrStoreNotFound) {
		t.Fatalf("Open with create_table=false on a missing table = %v, want store.ErrStoreNotFound", err)
	}
}

func TestOpenURLRefusesBadURLs(t *testing.T) {
	for _, u := range []string{
		"dynamodb://",
		"dynamodb:table",
		"dynamodb://table/extra",
		"dynamodb://key:secret@table",
		"dynamodb://table?regoin=us-east-1",
		"dynamodb://table?partition_depth=0",
		"dynamodb://table?create_table=maybe",
		"dynamodb://table?endpoint=localhost:8000",
	} {
		if _, err := store.Open(t.Context(), u, nil); !errors.Is(err, store.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want store.ErrInvalidURL", u, err)
		}
	}
}

// TestNewArgumentErrors: New refuses a nil context, a nil client and an
// empty table with errors wrapping store.ErrNilArgument, before any
// request.
func TestNewArgumentErrors(t *testing.T) {
	c := awsdynamodb.New(awsdynamodb.Options{Region: "us-east-1"})
	var nilCtx context.Context
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		client *awsdynamodb.Client
		table  string
	}{
		{"nil context", nilCtx, c, "t"},
		{"nil client", t.Context(), nil, "t"},
		{"empty table", t.Context(), c, ""},
	} {
		d, err := dynamodb.New(tc.ctx, tc.client, tc.table, nil)
		if !errors.Is(err, store.ErrNilArgument) || d != nil {
			t.Errorf("New with a %s = %v, %v; want store.ErrNilArgument", tc.name, d, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "dynamodb: ") {
			t.Errorf("New with a %s: %q does not start with %q", tc.name, err, "dynamodb: ")
		}
	}
}
