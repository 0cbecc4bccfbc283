// Package anthropic executes Claude's client-side memory tool
// (memory_20250818) over any agentmem store, for many users, exactly once.
//
// The model sends view, create, str_replace, insert, delete and rename
// commands on paths under /memories; a Tool runs each one for the user the
// application names (the namespace never comes from the model) and
// returns the texts the memory tool's documentation defines (the
// TypeScript SDK's BetaLocalFilesystemMemoryTool returns them too), and
// where it defines none the texts of the Python SDK's handler, so the
// model sees what it is used to. The helpers ToolParam, DecodeToolUse,
// Handle, HandleMessage, ResultBlock and ListingBlock plug it into
// github.com/anthropics/anthropic-sdk-go/v2.
//
// # Layout
//
// The model's /memories/<rest> of namespace ns is the store path
// <EscapeNamespace(ns)>/memories/<rest>, each name of <rest> mapped to a
// store segment (see Paths; StorePath computes it). Journals of
// multi-step commands live beside it, in <ns>/memories-journal/<operation
// id>, and never show in a view. The store keeps no directories: a
// directory exists while a file lies below it, and views show every
// directory as 4.0K.
//
// # Paths
//
// A path must be /memories or start with /memories/ ("Path must start with
// /memories, got: …"); ".." in any spelling (with "/" or "\", percent
// encoded once or more) and NUL are refused as "Path … would escape
// /memories directory"; empty and "." segments are skipped. Every other
// name works, as on a file system: spaces, punctuation, any letter
// ("/memories/café notes.md"). A name that is a valid store segment
// ([A-Za-z0-9_.-], at most 200 characters, no "..", not starting with
// ".agentmem") is stored as it is; any other is encoded, reversibly:
// "--", then the name with ASCII letters, digits, '_' and '.' kept and
// every other character written as "-xx", "-uxxxx" or "-Uxxxxxx" (its
// code point in hex), so "café notes.md" is stored as
// "--caf-e9-20notes.md". A name that is itself such an encoding (one
// starting with "--" that decodes and re-encodes to itself) is encoded
// too, so no two names share a stored name; views decode stored names, so
// the model sees its own names back, and a file placed in the store by
// other means is listed under a name that reaches it. A name whose
// stored form is longer than 200 characters (about 66 accented or 33 CJK
// characters) is refused: "The path … is not a valid memory path: the
// name … is too long …"; so is a path that is not valid UTF-8.
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
// # Lifetimes
//
// A file's expiry and pin (store.WriteRequest.ExpiresAt and Pinned, set by
// write_memory, the CLI, the API or the console) are kept by every command
// that rewrites it: str_replace, insert and rename (the copy takes the
// file's metadata, expiry and pin); create never overwrites a file. The
// memory tool has no argument for either, so no command changes them. An
// expired file is absent to every command, as the store hides it: view
// neither lists nor shows it, edits report that it does not exist, and
// create may write its path anew. A directory view marks neither pinned
// nor expiring files: the reference format is one "{size}\t{path}" line
// per entry, and a mark after the path would read as part of its name.
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
// # Differences from the reference handlers
//
// Deliberate, for a store that is not a file system or for safety:
//
//   - Names: "/memoriesX" is refused (the reference reads it as
//     /memories/X); "..", even one that stays inside /memories, is
//     refused as an escape; a name longer than 200 characters once stored
//     is refused (a file system allows 255 bytes).
//   - Directories: the store keeps none, so a directory vanishes with its
//     last file (the reference keeps empty directories), and every
//     directory is listed as 4.0K.
//   - Delete: "/memories/" is refused like "/memories" ("Cannot delete the
//     /memories directory itself"; the reference deletes the whole
//     directory for "/memories/"); rename of /memories is refused ("Cannot rename the
//     /memories directory itself"), and so is a rename of a directory
//     into itself ("Cannot move … into itself").
//   - Creating below a file says "The path … is a file, not a
//     directory.".
//   - Bounds: files longer than Options.MaxFileChars cannot be viewed,
//     edited or renamed (a directory view still lists them, with their
//     whole size); a directory view lists at most Options.MaxListFiles
//     files, and a larger directory cannot be deleted or renamed (each
//     refused with its own message).
//   - Where the SDKs differ, the documented text wins (the directory
//     header "…, excluding hidden items and node_modules:", whose
//     node_modules entries are skipped, and "…It should be within the
//     range of lines of the file: [0, N]"); behaviour otherwise follows
//     the Python SDK: insert counts lines as Python's splitlines does
//     (the TypeScript SDK counts a final empty line), a non-unique old_str
//     lists each occurrence's line, and sizes round as Python's "%.1f"
//     does (1280 bytes is 1.2K; the TypeScript SDK writes 1.3K).
//   - Errors are returned as their text with IsError set; the TypeScript
//     SDK's tool runner adds "Error: " before the text of a thrown error.
package anthropic
