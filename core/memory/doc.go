// Package memory is the notebook capability an agent framework mounts: four
// tools the model curates its memory with (write_memory, read_memory,
// delete_memory, search_memory), a bounded snapshot of MEMORY.md injected
// beside each model request, trusted usage guidance for the instructions,
// and [Append] for background jobs that add notes on their own.
//
// A [Memory] is framework-neutral. An adapter (such as the ADK one in
// github.com/agentmem/agentmem/adk) turns [Memory.Tools] into the
// framework's tool declarations, routes every tool call to [Memory.Call],
// puts [Memory.Instructions] into the system instructions and
// [Memory.Snapshot] beside the latest user prompt. Swapping the
// [store.Store] underneath never changes agent code. [Memory.Budget]
// reports how the snapshot spends its token budget, part by part
// (estimated with [EstimateTokens]), for a console to show.
//
// Each namespace (usually one end user) gets its own notebook at
// <namespace>/<agent name>/<file>. The namespace is resolved by application
// code ([Options.Namespace], [Options.NamespaceFunc] or
// [Invocation.Namespace]); it is never a tool argument, so the model cannot
// reach another namespace.
//
// # File names
//
// A file argument is one name of [A-Za-z0-9._-], with ".md" added when it
// has none; an extension ".md" in any case is ".md", and any case of
// MEMORY.md is [MainFile], so "MEMORY.MD" never becomes a second notebook.
// Otherwise names are case-sensitive, and a name that differs from an
// existing file's only in letter case is refused, with a tool error naming
// the existing file: write_memory does not create it, and read_memory and
// delete_memory say which file exists. An exact name always wins (two
// variants made outside the notebook stay reachable).
//
// # Errors
//
// Mistakes the model can fix (a bad file name, an ambiguous old_text, a
// file over the size limit, a query that is too long, a file that kept
// changing during a write) are not Go errors: [Memory.Call] returns them
// as a [*ToolError] result the model reads and can act on.
//
// Go errors are reserved for what the model cannot fix: [ErrMissingID]
// (no stable run or tool-call id), [store.ErrOperationConflict] (a tool
// call id reused with other arguments), [ErrScope] (a backend returned a
// path outside the resolved scope), [store.ErrInvalidPath] (an invalid
// namespace), [ErrUnknownTool], resolver failures, and backend or context
// errors. Before showing such an error to a model, pass it through
// [Redact]: store errors may name paths and namespaces. [ErrNoUser] is
// the adapters' (adk, eino, genkit, mcp) error for a request without a
// user id, one value for all of them.
//
// # Consistency
//
// Writes and deletes are compare-and-swap with up to [MaxAttempts]
// attempts, every attempt carrying the same [store.Operation]: its id is a
// hash of (scope, run id, tool-call id) and its fingerprint a hash of
// (kind, path, model arguments). A replayed tool call (same ids, same
// arguments) therefore returns its original result with "replayed": true
// and writes nothing, on every backend. [Append] follows the same rules
// for background jobs and coexists with the model's own writes, but never
// gives up for contention: it appends atomically where the backend can
// ([store.Store.Append]) and otherwise retries until its context ends.
// The pruned-history pipeline that feeds a notebook in the background (a
// history window's queue, rotating series, consolidation) is package
// [github.com/agentmem/agentmem/core/memory/pruned].
//
// Every injected snapshot is read fresh from the store, so a write made by
// a tool (or by another process) shows in the next model request.
//
// # Cost
//
// On a store with an atomic mutation, a write or delete costs the file read
// it needs plus one atomic request, whose receipt check answers a replay
// (no receipt lookup comes first); a create costs the same where the
// driver checks file/folder collisions itself. A tool that finds no file
// at its name (a create, a read or delete of an absent file; never for
// MEMORY.md) lists the scope's names that begin as it does, up to its
// first letter in either case (two listings of at most
// [Limits.MaxSearchFiles] paths), to find a case variant. A snapshot is one round
// trip ([store.Store.ReadAndList]). Over the nine primitives a receipt
// lookup comes first, so a replay costs one request.
//
// # Capabilities
//
// Memory needs nothing beyond [store.Store]: search uses the store's
// bounded lexical search (native or fallback), and write metadata works on
// every backend. Telemetry is optional ([Options.Tracer]); spans never
// carry memory content, namespaces or file names.
package memory
