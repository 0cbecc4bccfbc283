// Logging of the failures the store swallows by design (Options.Logger) and
// ErrorKind.

package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentmem/agentmem/core/driver"
)

// warn logs, at Warn, a failure the store swallows by design (the
// bookkeeping that ends an attempt, a settlement that gave up): the change's
// outcome stands, and a later replay or write of the path settles what was
// left. By default a record carries the error's kind and a hash of the
// operation id, never content, paths, operation ids or error text (which
// may name a path); Options.LogDetails adds the path, the id and the error.
func (s *Store) warn(ctx context.Context, msg, opID, path string, err error) {
	l := s.logger
	if l == nil {
		l = slog.Default()
	}
	if !l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	attrs := []slog.Attr{slog.String("error_kind", ErrorKind(err))}
	if opID != "" {
		attrs = append(attrs, slog.String("operation_hash", hashID(opID)))
	}
	if s.logDetails {
		attrs = append(attrs, slog.String("operation", opID), slog.String("path", path), slog.Any("error", err))
	}
	l.LogAttrs(ctx, slog.LevelWarn, "agentmem: "+msg, attrs...)
}

// hashID returns 16 hex digits of the SHA-256 of id: enough to tell log
// records of one operation apart from another's, never the id itself (an
// operation id may embed a user id).
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// ErrorKind names the class of err for logs and telemetry, without its
// text: the snake_case name of the store sentinel it matches
// ("conflict", "operation_conflict", "not_found", "precondition_failed"
// for driver.ErrPrecondition, "canceled", "deadline_exceeded", …), else its
// Go type ("*net.OpError"), or "" for nil.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return fmt.Sprintf("%T", err)
}

// errorKinds is checked in order: the most specific sentinel first (a
// conflict wraps driver.ErrPrecondition).
var errorKinds = []struct {
	err  error
	name string
}{
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{ErrOperationConflict, "operation_conflict"},
	{ErrConflict, "conflict"},
	{ErrNotFound, "not_found"},
	{ErrInvalidOperation, "invalid_operation"},
	{ErrReservedPath, "reserved_path"},
	{ErrInvalidPath, "invalid_path"},
	{ErrInvalidBound, "invalid_bound"},
	{ErrInvalidMetadata, "invalid_metadata"},
	{ErrInvalidContent, "invalid_content"},
	{ErrNoDriver, "no_driver"},
	{ErrPathEscape, "path_escape"},
	{ErrPathCollision, "path_collision"},
	{ErrTooLarge, "too_large"},
	{driver.ErrPrecondition, "precondition_failed"},
}
