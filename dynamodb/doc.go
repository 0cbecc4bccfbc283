// Package dynamodb is the Amazon DynamoDB driver for agentmem.
package dynamodb
