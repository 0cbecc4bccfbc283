// Package anthropic executes Claude's client-side memory tool
// (memory_20250818) over any agentmem store, for many users, exactly once.
//
// The model sends view, create, str_replace, insert, delete and rename
// commands on paths under /memories; a Tool runs each one for the user the
// application names (the namespace never comes from the model) and
// returns the text the reference handlers of Anthropic's Python and
// TypeScript SDKs return, so the model sees what it is used to. The
// helpers ToolParam, DecodeToolUse, Handle, HandleMessage, ResultBlock and
// ListingBlock plug it into github.com/anthropics/anthropic-sdk-go/v2.
//
// # Layout
//
// The model's /memories/<rest> of namespace ns is the store path
// <EscapeNamespace(ns)>/memories/<rest> (memory.EscapeNamespace: any id,
// one safe segment). Journals of multi-step commands live beside it, in
// <ns>/memories-journal/<operation id>, and never show in a view. The
// store keeps no directories: a directory exists while a file lies below
// it, and views show every directory as 4.0K.
//
// # Paths
//
// A path must be /memories or start with /memories/ ("Path must start with
// /memories, got: …"); ".." in any spelling (with "/" or "\", percent
// encoded once or more) and NUL are refused as "Path … would escape
// /memories directory"; empty and "." segments are skipped; every other
// name must be a store segment: letters, digits, '.', '-' and '_', at most
// 200 characters, else "The path … is not a valid memory path: …".
//
// # Consistency
//
// Every mutation is a compare-and-swap write or delete with an operation
// whose id digests the namespace and the tool_use id (and whose
// fingerprint digests the command), retried up to MaxAttempts times. A
// replayed tool_use id returns the original result and applies nothing
// again: create, insert and delete results follow from the command; the
// write of str_replace stores the snippet's line range in its metadata,
// so a replay rebuilds the snippet while the file still holds that write
// (after a later change, only the result's first line). Rename and the
// delete of a directory write a journal first (their plan: each file and
// the version it had) and then run each step with its own operation
// (op/copy/i, op/delete/i), so a crash between a copy and a delete is
// finished by the replay, never leaving two copies or none; the journal is
// deleted last. A file changed by someone else after the plan is left in
// place rather than lost. A refused command changes nothing and records
// nothing: its replay runs it again.
//
// # Errors
//
// Mistakes the model can fix come back as a Result with IsError (the
// tool_result's is_error). Go errors are programmer errors, checked with
// errors.Is: ErrNoStore, ErrNoNamespace, ErrNoToolUseID, ErrNotMemoryTool
// (ErrInvalidInput is turned into an error result by Handle); or a context
// or backend error, after which a replay of the same tool_use id settles
// the command.
//
// # Differences from the reference handler
//
// "/memoriesX" is refused (the reference reads it as /memories/X); "..",
// even one that stays inside /memories, is refused as an escape; names
// outside the store's alphabet are refused; creating below a file says
// "The path … is a file, not a directory."; renaming /memories or a
// directory into itself is refused with its own message; files longer than
// Options.MaxFileChars and directories with more than Options.MaxListFiles
// files are refused.
package anthropic
