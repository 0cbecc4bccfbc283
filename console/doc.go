// Package console serves agentmem's HTTP API and web console over a
// [store.Store]: the JSON API under /api/v1/ and the console's pages
// beside it (/, /ns/{ns}/…, /signin, /static/…), on one [Handler].
//
// [New] returns the handler; [Options.Authenticate] (required) resolves
// every request's [Principal]. agentmem serve fills it from MCP's API keys
// and OAuth verifier; mount the handler at the root or under a prefix
// with http.StripPrefix.
//
//	h, err := console.New(s, &console.Options{Authenticate: auth})
//	mux.Handle("/api/", h)
//
// The document /api/v1/openapi.json (OpenAPI 3.1, served without
// authentication) describes every route; a test checks it against the
// route table and against every status a test response had.
//
// # Namespaces and access
//
// A namespace is the first path segment of the store
// (memory.EscapeNamespace of a user id, as MCP's HTTP server and the ADK
// adapter use); file paths in URLs are relative to it
// (/api/v1/namespaces/kamal/files/main/MEMORY.md is kamal/main/MEMORY.md).
// A principal that is not Admin reaches only Principal.Namespace(): every
// other namespace answers 404, exactly as one that does not exist, so that
// a key learns nothing about other users. Listing namespaces and forgetting
// one need an admin (403 otherwise), on the API and the pages alike: one
// route table names every API operation and page with the role it needs,
// checked in one place before the route runs. A URL path with ".", ".." or an empty
// segment, also percent-encoded, is refused with 400 before routing.
//
// # HTTP conventions
//
// ETag is the file's version (a strong entity-tag, see [ETag]). A write
// (PUT) with If-Match is a compare-and-swap: a stale version answers 412
// and writes nothing. If-None-Match: * creates only (412 when the file
// exists). A PUT without either creates the file, and answers 428 when it
// exists: nothing is overwritten blindly. DELETE and a restore need
// If-Match (a restore of a deleted file, If-None-Match: *). An
// Idempotency-Key header makes a mutation exactly-once: its store operation
// id is derived from the key, the principal and the namespace, and its
// fingerprint from the method, path, body and preconditions; a retry
// answers the same (with Idempotent-Replayed: true) and writes nothing, and
// the same key with another request answers 422. Every write records who
// made it: metadata [UpdatedByKey] (the principal's user) and [ClientKey]
// (its client), which agentmem log shows.
//
// A file's lifetime: GET and the listings show its expires_at (RFC 3339,
// absent for none) and pinned; a JSON PUT may give "expires" (7d, 2w, 12h,
// 2026-12-31, an RFC 3339 time, or "never"; memory.ParseExpiry) and
// "pinned". Every write that does not name them keeps the file's expiry
// and pin (a text/* PUT, the editor's save, a consolidation's change); a
// write that would leave a file both pinned and expiring is refused with
// 400 invalid-lifetime, saying what to send. An expired file is absent at
// once; its history shows the expiry as a delete by store.ExpiryUpdatedBy,
// and a restore brings it back without its expiry. The file page shows
// the lifetime and sets it with a small form; the listings mark pinned
// and expiring files. A consolidation's edit may give a file an expiry
// ("until Friday"); its result lists them (expiries) beside the diff.
//
// Listings page with an opaque cursor (next_cursor, passed back as
// ?cursor=), bound to the listing and namespace it came from.
//
// # Errors
//
// Every error is an RFC 9457 problem details object ([Problem],
// application/problem+json) whose type is [ProblemTypePrefix] plus a slug.
// The store's sentinels map to statuses: store.ErrNotFound 404,
// store.ErrConflict 412 (428 without a precondition), store.ErrOperationConflict
// 422, store.ErrInvalidPath 400, store.ErrPathCollision 409,
// store.ErrTooLarge 413, store.ErrInvalidLifetime 400, store.ErrHistoryUnsupported 501, a canceled or
// timed-out request 503, anything else 500 (logged, never shown). A 401
// carries WWW-Authenticate: Bearer realm="agentmem".
//
// # The console's pages
//
// The pages are server-rendered (html/template, embedded; one small
// script that only adds keyboard shortcuts, "/" for search and "e" to
// edit: every page works with JavaScript off). Signing in (/signin) resolves the typed API key through
// Options.Authenticate, as a bearer token would be, and starts a
// server-side session (random id, Options.SessionTTL) held in an HttpOnly,
// SameSite=Strict cookie, Secure over TLS or with Options.SecureCookie
// (behind a proxy that terminates TLS); an unknown or expired session is
// sent back to sign in. The session keeps the key in the server's memory
// and resolves it through Options.Authenticate again on every page
// request, as the API does every call: a key that is no longer known ends
// the session (the next page is the sign-in page, a form posted through
// it does nothing), a changed role applies at once. Notices (saved,
// deleted) are the session's, shown once on the page they were left for,
// never text from the URL. Every page sends a strict
// Content-Security-Policy (default-src 'self', no inline script,
// frame-ancestors 'none') and X-Content-Type-Options: nosniff; every
// unsafe request passes http.CrossOriginProtection, so a cross-origin
// form post is refused with 403. Stored names and metadata are shown as
// text, never as markup; a file page renders the note as Markdown
// (goldmark: tables, task lists, code) with raw HTML dropped (the page
// says so), only http(s), mailto and relative links kept (javascript:,
// data: and the rest become their text) and images shown as links to
// their source, so nothing a note holds runs or loads; ?view=raw shows
// it as text, and the editor is one click away.
//
// The pages write through the API's own paths, so their writes record
// the signed-in user under [UpdatedByKey] and client "console" under
// [ClientKey]. An editor form carries the version it was rendered from
// (the compare-and-swap of its save) and a token per render (its
// operation id), so a double submit applies once; on a conflict the page
// shows your text (still in the form, now against the current version),
// theirs and the difference, and, when the store's history holds the
// version the edit started from, the three-way merge of that version,
// yours and theirs (textdiff.Merge) in a form of its own that saves over
// theirs' version: overlapping edits are marked in it and shown side by
// side, and it is refused while its markers are left in. A restore is a compare-and-swap on the
// version the page showed as current, exactly once per form render. A
// delete asks first on a page of its own (no script needed) showing the
// file; the notebook then links to the deleted version to restore it, or
// says that the store's history does not hold it. History pages list
// changes as the API does: by path, newest first within a file, a page at
// a time. The deleted page (GET /api/v1/namespaces/{ns}/deleted) lists the
// files whose newest recorded change is a delete, with who, when and why,
// each with a restore form (the history's restore, over no file, exactly
// once); the activity page (GET /api/v1/namespaces/{ns}/activity) counts
// the recorded changes by client ([ConsolidatorClient] for a
// consolidation's) and by [UpdatedByKey]. Both read up to
// [MaxHistoryScan] changes and say when the store keeps or records no
// history, and how to turn it on. Forgetting a namespace needs an admin and its typed name. The notebook
// page uploads an export back (multipart), exactly once per form render.
// The notebook page shows what the model pays (memory.Budget: the tokens
// of the guidance, MEMORY.md's excerpt and the file list out of
// MaxTokens, the lines cut, each file's tokens, a warning when MEMORY.md
// no longer fits), as the snapshot route answers it ([BudgetJSON]);
// folder pages (/ns/{ns}/tree/…) list a folder's subfolders and files,
// and file pages link each folder of their path.
//
// Mount the handler at the root, or under a prefix with http.StripPrefix
// (the pages find their base path from the request): the pages need the
// paths above, not only /api/.
//
// Forgetting a namespace (DELETE /api/v1/namespaces/{ns}) needs an admin
// and ?confirm=<namespace>; export streams the archive agentmem export
// writes (core/archive). Import (POST /api/v1/namespaces/{ns}/import, the
// tar as the body, Content-Type application/x-tar) reads it back: an admin
// into any namespace, a user principal into its own, every path of the
// archive inside the namespace. The archive is checked whole first (a
// damaged one is 422 and writes nothing, one over MaxImportBytes 413);
// every write is a compare-and-swap; files that differ are kept and
// listed (409 with the counts) unless ?force=1; each file written records
// the principal (UpdatedByKey, ClientKey) over the archive's metadata; an
// Idempotency-Key applies each file once.
//
// # Consolidation
//
// With [Options.Consolidator] set, POST /api/v1/namespaces/{ns}/consolidate
// (the namespace's user or an admin) runs pruned.Consolidate on the
// namespace's notebook: pruned history since the checkpoint becomes edits
// of MEMORY.md and topic files, applied with write_memory's validation
// and compare-and-swap; while a run leaves more, it runs again, up to
// [MaxConsolidateRuns]. It answers [ConsolidateJSON]: the counts, the diff
// and the model's token usage. ?dry_run=1 answers the proposal and writes
// nothing. Every change records UpdatedByKey
// "agentmem-consolidator/<model>" (core/memory's) and the principal under
// [RequestedByKey] and [ClientKey]. Without a model the route answers 501
// (consolidation-not-configured); the model failing answers 502
// (model-failed), its answer not being valid edits 502
// (model-answer-invalid); either way the failing run wrote nothing.
//
// Exactly once: core/memory stores each run's plan with its checkpoint
// before writing, so a run that stopped half way is resumed by the next
// (its edits answered as replays). On top of that, an apply with an
// Idempotency-Key (or the page's form token) is recorded in the
// notebook's consolidation state (<agent>/.consolidation/requests/): a
// claim before the model is asked (the key used for another request
// answers 422 there), the answer once done. A retry after the answer gets
// the same answer, with Idempotent-Replayed: true, and writes nothing,
// even if more was pruned since; a retry after a failure or a lost answer
// runs again, resuming where the first stopped, and answers what it did.
// A dry run ignores the key.
//
// The notebook page's Preview is a dry run that shows the proposed
// diff; its Apply (and the notebook page's "Consolidate now") runs
// consolidation for real, which asks the model again: what it applies may
// differ from the preview, and the page after it shows exactly what was
// applied. Both are plain forms and work with JavaScript off.
package console
