package cosmosdb

import (
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/agentmem/agentmem/core/driver"
)

// Conditions that failed on a row the driver read, rather than on the
// service's answer to a conditional request.
var (
	errVersion      = fmt.Errorf("cosmosdb: stored version differs: %w", driver.ErrPrecondition)
	errAbsent       = fmt.Errorf("cosmosdb: no such item: %w", driver.ErrPrecondition)
	errReceiptState = fmt.Errorf("cosmosdb: receipt is not pending with this version: %w", driver.ErrPrecondition)
	errContended    = fmt.Errorf("cosmosdb: item kept changing: %w", driver.ErrPrecondition)
)

var errNoETag = errors.New("cosmosdb: the service returned an item without an ETag; nothing was written")

// statusOf returns the HTTP status of a Cosmos DB error, or 0.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// precondition maps a failed condition (409 Conflict on create, 412
// Precondition Failed on If-Match, 404 Not Found on a conditional replace
// or delete) to driver.ErrPrecondition, keeping the service's error in the
// chain. The driver calls it only for answers that prove nothing was
// written: conditional writes run without SDK retries (see send).
func precondition(err error) error {
	return fmt.Errorf("%w: %w", driver.ErrPrecondition, err)
}

// failure maps every other error of a write: 413 is driver.ErrTooLarge
// (nothing written), anything else is returned as is (its outcome is
// unknown to the store).
func failure(err error) error {
	if statusOf(err) == 413 {
		return fmt.Errorf("%w: %w", driver.ErrTooLarge, err)
	}
	return err
}
