package firestore

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentmem/agentmem/core/driver"
)

// conditionFailed reports whether err is Firestore's answer to a write
// whose precondition did not hold: ALREADY_EXISTS (create),
// FAILED_PRECONDITION (update time) or NOT_FOUND (update or delete of a
// missing document). The callers re-read before they conclude anything,
// because the answer may belong to the client's retry of a landed write.
func conditionFailed(err error) bool {
	switch status.Code(err) {
	case codes.AlreadyExists, codes.FailedPrecondition, codes.NotFound:
		return true
	}
	return false
}

func notFound(err error) bool { return status.Code(err) == codes.NotFound }

// errUnknown reports a conditional write whose outcome the driver cannot
// tell; it is never ErrPrecondition.
var errUnknown = errors.New("firestore: outcome unknown: the write may have been applied")

// fail wraps err for call, keeping a context error visible to errors.Is
// (the client reports cancellation as a gRPC status).
func fail(ctx context.Context, call string, err error) error {
	return fmt.Errorf("firestore: %s: %w", call, driver.ContextError(ctx, err))
}

// precondition wraps a Firestore condition failure as driver.ErrPrecondition.
func precondition(call string, err error) error {
	if err == nil {
		return fmt.Errorf("firestore: %s: %w", call, driver.ErrPrecondition)
	}
	return fmt.Errorf("firestore: %s: %w: %w", call, driver.ErrPrecondition, err)
}
