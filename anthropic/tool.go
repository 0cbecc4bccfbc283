package anthropic

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// Programmer errors: Execute and the SDK helpers return them as Go errors,
// never as tool results.
var (
	// ErrNoStore reports a Tool made without a store.
	ErrNoStore = errors.New("anthropic: memory tool has no store")
	// ErrNoNamespace reports an empty namespace: the application must say
	// whose memory a command acts on.
	ErrNoNamespace = errors.New("anthropic: namespace missing: pass the user's id")
	// ErrNoToolUseID reports a mutating command without the tool_use id
	// that makes it exactly-once.
	ErrNoToolUseID = errors.New("anthropic: tool_use id missing")
	// ErrNotMemoryTool reports a tool_use block for another tool.
	ErrNotMemoryTool = errors.New("anthropic: tool_use block is not for the memory tool")
)

// The defaults of Options.
const (
	DefaultMaxFileChars = 1 << 20
	DefaultMaxListFiles = 10000
)

// MaxAttempts is how many compare-and-swap attempts an edit makes (one try
// and 15 retries), all with the same operation.
const MaxAttempts = 16

// Options configures a Tool. The zero value (or nil) means defaults.
type Options struct {
	// MaxFileChars is the longest file, in characters, the tool reads,
	// edits or renames; a longer one is reported to the model. Default
	// DefaultMaxFileChars.
	MaxFileChars int
	// MaxListFiles bounds how many files one command lists: a directory
	// view, or the files a directory delete or rename moves (a larger
	// directory is refused). Default DefaultMaxListFiles.
	MaxListFiles int
}

// Tool executes Claude's memory tool (memory_20250818) over a store, for
// any number of users. It is safe for concurrent use.
type Tool struct {
	s *store.Store
	o Options
}

// New returns a Tool over s. It fails with ErrNoStore when s is nil.
func New(s *store.Store, opts *Options) (*Tool, error) {
	if s == nil {
		return nil, ErrNoStore
	}
	o := Options{MaxFileChars: DefaultMaxFileChars, MaxListFiles: DefaultMaxListFiles}
	if opts != nil {
		if opts.MaxFileChars > 0 {
			o.MaxFileChars = opts.MaxFileChars
		}
		if opts.MaxListFiles > 0 {
			o.MaxListFiles = opts.MaxListFiles
		}
	}
	return &Tool{s: s, o: o}, nil
}

// Command is one memory command, as the model sends it in a tool_use
// block's input. Which fields count depends on Command.
type Command struct {
	// Command is "view", "create", "str_replace", "insert", "delete" or
	// "rename".
	Command string `json:"command"`
	// Path is the path of view, create, str_replace, insert and delete.
	Path string `json:"path,omitempty"`
	// ViewRange is view's optional [start, end] (1-based, end -1 = to the
	// end of the file).
	ViewRange []int64 `json:"view_range,omitempty"`
	// FileText is create's content.
	FileText string `json:"file_text,omitempty"`
	// OldStr is str_replace's text to find.
	OldStr string `json:"old_str,omitempty"`
	// NewStr is str_replace's replacement.
	NewStr string `json:"new_str,omitempty"`
	// InsertLine is insert's line number (0 = before the first line).
	InsertLine int64 `json:"insert_line,omitempty"`
	// InsertText is insert's text.
	InsertText string `json:"insert_text,omitempty"`
	// OldPath is rename's source.
	OldPath string `json:"old_path,omitempty"`
	// NewPath is rename's destination.
	NewPath string `json:"new_path,omitempty"`
}

// Result is what a command returns to the model: the text of the
// tool_result block, and whether it reports an error the model can act on.
type Result struct {
	// Text is the tool result's text.
	Text string
	// IsError marks a refused command (nothing was changed).
	IsError bool
}

func ok(text string) Result      { return Result{Text: text} }
func refused(text string) Result { return Result{Text: text, IsError: true} }

// Execute runs one command for namespace, the user whose memory it acts
// on (chosen by the application, never by the model). toolUseID is the
// id of the tool_use block; a mutating command with the same namespace
// and toolUseID is applied at most once, and a replay returns the
// original result. Mistakes the model can fix (a bad path, a missing
// file, a non-unique old_str) come back as a Result with IsError.
//
// It fails with ErrNoNamespace, ErrNoToolUseID (for a mutating command
// without one), a context error, or the store's error when the backend
// fails; a later replay with the same toolUseID then settles the command.
func (t *Tool) Execute(ctx context.Context, namespace, toolUseID string, cmd Command) (Result, error) {
	l, err := newLayout(namespace)
	if err != nil {
		return Result{}, err
	}
	if cmd.Command == "view" {
		return t.view(ctx, l, cmd)
	}
	switch cmd.Command {
	case "create", "str_replace", "insert", "delete", "rename":
	default:
		return refused(fmt.Sprintf("Unknown command: %s", cmd.Command)), nil
	}
	if toolUseID == "" {
		return Result{}, ErrNoToolUseID
	}
	op := operation(l, toolUseID, cmd)
	switch cmd.Command {
	case "create":
		return t.create(ctx, l, op, cmd)
	case "str_replace":
		return t.strReplace(ctx, l, op, cmd)
	case "insert":
		return t.insert(ctx, l, op, cmd)
	case "delete":
		return t.delete(ctx, l, op, cmd)
	default:
		return t.rename(ctx, l, op, cmd)
	}
}

// operation is the idempotency key of one tool call: its id digests the
// namespace and the tool_use id, its fingerprint the command.
func operation(l layout, toolUseID string, cmd Command) store.Operation {
	return store.Operation{
		ID:          digest(map[string]any{"namespace": l.ns, "tool_use_id": toolUseID}),
		Fingerprint: digest(cmd),
	}
}

// step derives the operation of one step of a multi-step command.
func step(op store.Operation, name string) *store.Operation {
	return &store.Operation{ID: op.ID + "/" + name, Fingerprint: digest([]string{op.Fingerprint, name})}
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and plain structs always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// backoff waits a little before CAS attempt i+1, so that concurrent
// writers spread out.
func backoff(ctx context.Context, i int) error {
	return driver.Sleep(ctx, time.Duration(rand.IntN(250*(i%8+1)))*time.Microsecond)
}
