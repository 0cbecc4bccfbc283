package memory

import (
	"context"
	"errors"

	"github.com/agentmem/agentmem/core/store"
)

// Errors of the notebook itself; see the package doc for the full list.
var (
	// ErrMissingID reports a write or delete without a stable run id or
	// tool-call id, so it could not be made idempotent.
	ErrMissingID = errors.New("memory: write and delete need a stable run id and tool call id")
	// ErrScope reports that the store returned a path outside the resolved
	// scope or nested below it: a backend bug, never the model's.
	ErrScope = errors.New("memory: store returned a result outside the requested scope")
	// ErrUnknownTool reports a tool name this Memory does not serve.
	ErrUnknownTool = errors.New("memory: unknown tool")
	// ErrNoUser reports a request without a user id: memory is kept per
	// user, so there is no notebook to use. Every adapter (adk, eino,
	// genkit, mcp) returns it, wrapped with how to give the id in that
	// framework.
	ErrNoUser = errors.New("memory: give the request a user id: memory is kept per user")
)

// ToolError is a mistake the model can fix, returned by [Memory.Call] as
// the tool's result (it is not a Go error). It encodes as
// {"error": "<message>"}. The message names at most the file the model
// gave, never a namespace, a backend path or other files' content.
type ToolError struct {
	// Message tells the model what went wrong and how to fix it.
	Message string `json:"error"`
}

func toolErr(msg string) *ToolError { return &ToolError{Message: msg} }

// Redact returns err with a message fit for a model to read: it names the
// kind of failure only, never a path, namespace, content or backend
// detail. errors.Is and errors.As still see err. Redact(nil) is nil.
func Redact(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{msg: "memory: " + describe(err), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// describe names an error's kind without its details.
func describe(err error) string {
	switch {
	case errors.Is(err, ErrMissingID):
		return "the tool call has no stable run id or tool call id"
	case errors.Is(err, store.ErrOperationConflict):
		return "this tool call id was already used with different arguments"
	case errors.Is(err, ErrScope):
		return "the memory store returned a result outside the requested scope"
	case errors.Is(err, ErrUnknownTool):
		return "unknown memory tool"
	case errors.Is(err, store.ErrInvalidPath):
		return "invalid memory namespace"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "the request was canceled"
	default:
		return "the memory store failed"
	}
}

// errorType is the content-free failure class recorded in telemetry.
func errorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrMissingID):
		return "MissingID"
	case errors.Is(err, store.ErrOperationConflict):
		return "OperationConflict"
	case errors.Is(err, store.ErrConflict):
		return "Conflict"
	case errors.Is(err, ErrScope):
		return "ScopeError"
	case errors.Is(err, store.ErrInvalidPath):
		return "InvalidPath"
	case errors.Is(err, store.ErrInvalidMetadata):
		return "InvalidMetadata"
	case errors.Is(err, store.ErrTooLarge):
		return "TooLarge"
	case errors.Is(err, store.ErrPathEscape):
		return "PathEscape"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "Canceled"
	default:
		return "BackendError"
	}
}
