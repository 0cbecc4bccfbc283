// Package eino mounts an agentmem notebook ([memory.Memory]) on a CloudWeGo
// Eino agent (github.com/cloudwego/eino): one [Middleware] in
// adk.ChatModelAgentConfig.Handlers gives the model the four memory tools
// and puts the fresh MEMORY.md snapshot beside the latest user prompt of
// every model call.
//
//	mem, err := memory.New(store, nil) // any agentmem store
//	mw, err := agentmemeino.NewMiddleware(mem, nil)
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		Name: "assistant", Description: "...", Instruction: "...", Model: model,
//		Handlers: []adk.ChatModelAgentMiddleware{mw},
//	})
//	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
//	iter := runner.Query(memory.WithUserID(ctx, "kamal"), "I moved to Hanoi.")
//
// Eino has no user id of its own. The namespace is the id given by
// [memory.WithUserID] to the context of Runner.Run, or else the session value
// [Options.UserIDKey] (default "user_id", set with adk.WithSessionValues),
// escaped by [memory.EscapeNamespace] so that any id is one valid path
// segment and no id can reach another's files. A run with neither fails
// with [memory.ErrNoUser]. Set memory.Options.Namespace or NamespaceFunc to choose
// another namespace (a user id is still required).
//
// The tool-call id of a call is Eino's (compose.GetToolCallID: the model's
// tool-call id) and its run id the one given by [memory.WithRunID], or else a
// random id drawn when the agent run starts, so a call replayed within the
// run is never applied twice. To make a run resumed from a checkpoint
// exactly-once too, give Runner.Resume the run id of the original run.
//
// [Options.HistoryWindow] (opt-in) bounds the messages of every model call
// and appends the oldest, left out, to the user's pruned.md in the
// background, exactly once per Eino message id; call [Middleware.Close]
// on shutdown.
//
// # Errors
//
// Mistakes the model can fix come back to it as {"error": "..."} tool
// results. Errors it cannot fix (a reused tool-call id with other
// arguments, a backend failure, a missing user) are returned by the tool,
// and Eino ends the run with them: they reach the application, not the
// model. A snapshot failure fails the model call only with
// memory.Options.InjectionErrors set to memory.RaiseErrors; a namespace
// resolver failure or a missing user always does.
//
// # Consistency
//
// The snapshot is read from the store before every model call, so a write
// made by a tool in the same run shows in the next call. It is added to a
// copy of the model's input only (in WrapModel, below the agent's state):
// injected text never lands in the agent's messages, checkpoints or
// events, and never piles up. Place the middleware after any middleware
// that summarises or rewrites history, so that it wraps the model last.
//
// # Capabilities
//
// The middleware uses two ChatModelAgentMiddleware hooks: BeforeAgent adds
// the tools (unless the agent already has tools of those names) and draws
// the run id; WrapModel injects the memory guidance into the system message
// and the snapshot into the latest user message, for Generate and Stream.
// Each tool is a tool.InvokableTool whose Info carries the notebook's strict
// JSON Schema (schema.NewParamsOneOfByJSONSchema). [Middleware.Tools]
// returns the tools for agents built without the middleware.
package eino
