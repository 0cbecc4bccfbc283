package dynamodb

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentmem/agentmem/core/driver"
)

// FileItem exposes the item encoding of a file row to the benchmarks,
// which load tables directly with BatchWriteItem.
func FileItem(d *Driver, f driver.File) map[string]types.AttributeValue { return d.l.fileItem(f) }
