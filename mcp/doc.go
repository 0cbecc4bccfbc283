// Package mcp serves an agentmem notebook ([memory.Memory]) over the Model
// Context Protocol, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). Any MCP client (Claude Desktop,
// Claude Code, an agent framework) gets the four memory tools, the user's
// memory files as resources, and the injected block as a resource and a
// prompt:
//
//	mem, _ := memory.New(store, nil)
//	srv, _ := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal")})
//	err := srv.Run(ctx, &mcpsdk.StdioTransport{}) // stdio: one user
//
//	keys, _ := agentmemmcp.OpenKeyFile("/etc/agentmem/keys")
//	h, _ := srv.Handler(&agentmemmcp.HTTPOptions{Keys: keys}) // HTTP: the API key's user
//
// # Tools
//
// write_memory, read_memory, delete_memory and search_memory, with the
// notebook's own JSON Schemas ([memory.Memory.Tools]) and descriptions, and
// annotations: read_memory and search_memory are read-only; delete_memory
// is destructive and idempotent; write_memory is destructive (old_text
// replaces or removes a passage) and not idempotent (each append
// appends); none is open-world. A result is structured content (an object;
// read_memory's text as {"result": text}) and the same JSON as text
// content, for clients that ignore structured content. The notebook's
// guidance ([memory.Memory.Instructions]) is the server's instructions.
//
// # Users
//
// The namespace is never a tool argument: [Options.Namespace] resolves the
// caller's user id from the request ([FixedUser] for stdio,
// [AuthenticatedUser], the default, for HTTP), and the notebook lives
// under memory.EscapeNamespace(id), so any id is safe and no id reaches
// another user's files. File names in tool arguments and resource URIs
// follow the notebook's rule (one segment of [A-Za-z0-9._-], no ".."; the
// ".md" extension in any case; a name that differs from an existing file's
// only in letter case is refused, naming that file).
//
// Every write and delete records who made it, in the file's metadata (and
// the store's history): [memory.UpdatedByKey] is the user id (the API
// key's user, the OAuth token's user claim, [FixedUser]'s id over stdio)
// and [memory.ClientKey] the client's name from its initialize request
// (clientInfo.name), each without control characters and cut to
// [MaxWhoChars]; they override the same keys of the notebook's own
// memory.Options.WriteMetadata.
//
// # Exactly once
//
// Each tools/call is one notebook operation, keyed, in this order, by:
//
//  1. the client's idempotency key, _meta[MetaIdempotencyKey] (a string of
//     at most [MaxIdempotencyKey] bytes): applied once per user and key,
//     across sessions and restarts, for as long as the store keeps
//     receipts; the same key with other arguments is refused;
//  2. the session and the JSON-RPC request id: a request re-sent in the
//     same session (a retry after a lost reply) returns the original result
//     with "replayed": true and writes nothing. The session is the
//     Mcp-Session-Id over HTTP, and a random id per connection over stdio
//     and other transports, so ids reused by another session or a restarted
//     stdio server are new operations.
//
// The request id is stamped into _meta as a request arrives, by the
// transports of [Server.Run], [Server.Connect] and [Server.Handler]. A
// request served another way (the SDK server from [Server.MCP] run
// directly) is applied once, but a re-sent copy is applied again unless
// it carries an idempotency key.
//
// # Resources
//
// Every resource URI is "memory:///" and a name. resources/list returns
// the caller's own files ("memory:///MEMORY.md", "memory:///travel.md", at
// most [Options.MaxResources]) and [SnapshotURI] ("memory:///snapshot"),
// the injected block; resources/read reads them (bounded as read_memory
// is). An expired file is neither listed nor read, at once (the store
// hides it), and a pinned or expiring file says so in its resource's
// description ("Pinned.", "Expires 2026-12-31 00:00 UTC."). A subscriber
// to a file hears its expiry as a change, at the next poll.
// resources/subscribe is supported: a write or delete made through this
// server notifies the subscribers of that user's file and snapshot
// (notifications/resources/updated), and nobody else's. Changes made by
// other processes (another server, a background job, a person editing a
// file) are noticed by polling while someone is subscribed: every
// [Options.PollInterval] (default 3 s), per user; a change undone within
// one interval goes unseen. notifications/resources/list_changed is not
// sent (the list is per user).
//
// # HTTP
//
// [Server.Handler] serves the streamable HTTP transport at one path
// ([HTTPOptions.Path]; by default the root, and with OAuth the audience's
// path too) and answers 404 elsewhere; [Server.Mount] registers the same
// on an http.ServeMux of your own, beside health checks or a console. Both
// put MCP behind bearer tokens: API keys from a [KeyFile] (hashed,
// reloaded on change, compared in constant time), OAuth 2.1 JWT access
// tokens verified against the issuer's JWKS ([NewOAuthVerifier]; the
// protected resource metadata of RFC 9728 is served beside), both, or any
// auth.TokenVerifier that sets TokenInfo.UserID. A missing or unknown
// token gets 401 with an RFC 6750 challenge (WWW-Authenticate: Bearer
// realm="agentmem", and error="invalid_token" when a token was sent), a
// body over [HTTPOptions.MaxBodyBytes] 413, and a session id presented
// with another user's token 403. [Server.Shutdown] finishes the calls in
// flight.
//
// # Telemetry
//
// [Options.Observe] sees each message received ([RequestInfo], no
// content) and its outcome; otel.MCPObserver of the agentmem otel module
// makes OpenTelemetry spans of it.
//
// # Errors
//
// Mistakes the model can fix come back as tool results with IsError and
// {"error": "..."}, as the notebook returns them. Other failures of a tool
// call (a backend error, an idempotency key reused with other arguments)
// are IsError results too, redacted by [memory.Redact]; [Options.OnError]
// sees them in full. A request whose user cannot be resolved fails with a
// JSON-RPC error ([memory.ErrNoUser]), as does one on a memory with a namespace
// of its own ([ErrOwnNamespace]).
package mcp
