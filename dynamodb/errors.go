package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/agentmem/agentmem/core/driver"
)

func errorf(format string, args ...any) error {
	return fmt.Errorf("dynamodb: "+format, args...)
}

// ErrOutcomeUnknown reports a conditional write whose condition failed after
// an earlier attempt of it ended without a definite answer (a lost reply,
// a dropped connection, a 5xx that the SDK retried), when the item does
// not show whether that attempt landed.
// The write may have been applied; it is deliberately not
// driver.ErrPrecondition, and the store settles it through receipts.
var ErrOutcomeUnknown = errors.New("dynamodb: outcome unknown: the condition failed on a retried attempt")

// conditionFailed returns the item a failed condition reported
// (ReturnValuesOnConditionCheckFailure ALL_OLD; empty when there was none)
// and whether err is a failed condition. It classifies by error type only.
func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// Cancellation reason codes of TransactWriteItems.
const (
	reasonNone            = "None"
	reasonConditionFailed = "ConditionalCheckFailed"
)

// cancellation returns the reasons of a cancelled transaction, or false
// when err is not a TransactionCanceledException.
func cancellation(err error) ([]types.CancellationReason, bool) {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return tce.CancellationReasons, true
	}
	return nil, false
}

// attempts watches the HTTP attempts of one logical write (the SDK's
// retries and ours), so that a condition failure can be told apart from
// the echo of an earlier attempt that landed but whose reply was lost.
type attempts struct {
	// ambiguous is set when an attempt ended without a definite answer
	// from DynamoDB: no response (a dropped connection, a timeout) or a
	// 5xx, after which the write may or may not have been applied. A 4xx
	// answer is definite: nothing was applied.
	ambiguous bool
}

// option adds the watching middleware to one call. The Deserialize step
// runs once per attempt, inside the SDK's retry loop; added in front, it
// sees the error wrapped with the HTTP response.
func (a *attempts) option(o *awsdynamodb.Options) {
	o.APIOptions = append(slices.Clip(o.APIOptions), func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("agentmem.attempts",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				var resp *smithyhttp.ResponseError
				if err != nil && !(errors.As(err, &resp) && resp.HTTPStatusCode() >= 400 && resp.HTTPStatusCode() < 500) {
					a.ambiguous = true
				}
				return out, md, err
			}), middleware.Before)
	})
}

// Transaction cancellation reasons and errors after which nothing was
// written and the same request may simply be sent again.
var retryableReasons = map[string]bool{
	"TransactionConflict":           true,
	"ThrottlingError":               true,
	"ProvisionedThroughputExceeded": true,
}

// conflicted reports whether err says that DynamoDB refused the request
// because of a concurrent transaction or throttling the SDK does not
// retry: nothing was written and no condition failed.
func conflicted(err error) bool {
	var tc *types.TransactionConflictException
	if errors.As(err, &tc) {
		return true
	}
	reasons, ok := cancellation(err)
	if !ok {
		return false
	}
	retryable := false
	for _, r := range reasons {
		code := aws.ToString(r.Code)
		switch {
		case retryableReasons[code]:
			retryable = true
		case code != reasonNone:
			return false
		}
	}
	return retryable
}

// maxConflictRetries bounds how often a request refused by conflicted is
// sent again.
const maxConflictRetries = 6

// retryConflicts calls f until it does not fail with a conflicted error,
// at most maxConflictRetries more times, with jittered exponential
// backoff.
func retryConflicts(ctx context.Context, f func() error) error {
	backoff := 10 * time.Millisecond
	for i := 0; ; i++ {
		err := f()
		if i == maxConflictRetries || !conflicted(err) {
			return err
		}
		if err := driver.Sleep(ctx, backoff/2+rand.N(backoff/2+1)); err != nil {
			return err
		}
		backoff = min(2*backoff, time.Second)
	}
}

// conditional classifies the error of a single-item conditional write made
// watched by a. A condition failure is driver.ErrPrecondition (nothing was
// written) unless an earlier attempt was ambiguous; then the item the
// failure returned decides: landed(item) true means an earlier
// attempt applied the write (nil is returned); otherwise the outcome is
// unknown and ErrOutcomeUnknown is returned, never ErrPrecondition.
// landed may be nil when no item can prove it.
func conditional(err error, a *attempts, landed func(map[string]types.AttributeValue) bool) error {
	if err == nil {
		return nil
	}
	item, ok := conditionFailed(err)
	switch {
	case !ok:
		return err
	case !a.ambiguous:
		return fmt.Errorf("%w: %w", driver.ErrPrecondition, err)
	case landed != nil && landed(item):
		return nil
	default:
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
}

// versionIs returns a landed function that recognises the item our write
// stored: versions are unique, so an item carrying v is ours.
func versionIs(v string) func(map[string]types.AttributeValue) bool {
	return func(it map[string]types.AttributeValue) bool { return getS(it, attrVersion) == v }
}
