// Package genkit gives Firebase Genkit Go generations
// (github.com/firebase/genkit/go) an agentmem notebook ([memory.Memory]):
// [Define] registers the four memory tools with genkit.DefineTool, and the
// returned [Notebook] is a Genkit middleware that puts the fresh MEMORY.md
// snapshot beside the latest user prompt of every model request.
//
//	g := genkit.Init(ctx, genkit.WithPlugins(&googlegenai.GoogleAI{}))
//	mem, err := memory.New(store, nil) // any agentmem store
//	nb, err := agentmemgenkit.Define(g, mem, nil)
//	resp, err := genkit.Generate(memory.WithUserID(ctx, "kamal"), g,
//		ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("I moved to Hanoi."),
//		ai.WithTools(nb.Tools()...), ai.WithUse(nb))
//
// Genkit has no user id of its own. The namespace is the id given by
// [memory.WithUserID] to the context of genkit.Generate, or the one
// [Options.UserID] reads from the context (the auth of core.FromContext,
// say), escaped by [memory.EscapeNamespace] so that any id is one valid
// path segment and no id can reach another's files. A generation without
// one fails with [memory.ErrNoUser]. Set memory.Options.Namespace or NamespaceFunc
// to choose another namespace (a user id is still required).
//
// The tool-call id of a call is Genkit's tool request ref (the model's
// tool-call id, or one Genkit assigns) and its run id the one given by
// [memory.WithRunID], or else a random id drawn for each Generate call, so a call
// replayed within the generation is never applied twice. To make a
// repeated generation exactly-once too, give it the run id it had.
//
// # Errors
//
// Mistakes the model can fix come back to it as {"error": "..."} tool
// outputs, including arguments that fail Genkit's own schema validation.
// Errors it cannot fix (a reused ref with other arguments, a backend
// failure, a missing user) are returned by the tool, and Genkit ends the
// generation with them: they reach the application, not the model. A
// snapshot failure fails the model request only with
// memory.Options.InjectionErrors set to memory.RaiseErrors; a namespace
// resolver failure or a missing user always does.
//
// # Consistency
//
// The snapshot is read from the store before every model request, so a
// write made by a tool in the same generation shows in the next request.
// It is added to a copy of the request only, and the response is given the
// original request back: injected text never lands in resp.History() and
// never piles up.
//
// # Capabilities
//
// The [Notebook] is an ai.Middleware (named [MiddlewareName]) whose hooks
// are WrapModel (injection: guidance as a part of the system message, the
// block as a part of the latest user message) and WrapTool (the run id and
// ref for the memory tools). The tools are registered on the Genkit
// instance with the notebook's strict JSON Schemas (ai.WithInputSchema), so
// define one memory per ToolPrefix per instance.
package genkit
