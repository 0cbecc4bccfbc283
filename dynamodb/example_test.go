package dynamodb_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentmem/agentmem/core/store"
	"github.com/agentmem/agentmem/dynamodb"
)

// Build the AWS client as usual, put the driver under a store, then create,
// read and delete a memory file. It needs AWS credentials or DynamoDB Local,
// so it is compiled but not run.
func Example() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx) // region and credentials from the environment
	if err != nil {
		log.Fatal(err)
	}
	client := awsdynamodb.NewFromConfig(cfg, func(o *awsdynamodb.Options) {
		o.BaseEndpoint = aws.String("http://localhost:8000") // DynamoDB Local; leave out for AWS
	})

	d, err := dynamodb.New(ctx, client, "agent-memory", nil) // creates the table when missing
	if err != nil {
		log.Fatal(err)
	}
	s := store.New(d, nil) // the client stays the caller's
	defer s.Close()

	// Expected "" creates; an update or delete names the version it read.
	if _, err := s.Write(ctx, store.WriteRequest{Path: "kamal/main/MEMORY.md", Content: "- lives in Hanoi\n"}); err != nil {
		log.Fatal(err) // store.ErrConflict when the file already exists
	}
	f, err := s.Read(ctx, "kamal/main/MEMORY.md", 4000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(f.Content)
	if _, err := s.Delete(ctx, store.DeleteRequest{Path: f.Path, Expected: f.Version}); err != nil {
		log.Fatal(err)
	}
}
