// Package adk mounts an agentmem notebook ([memory.Memory]) on a Google ADK
// Go agent (google.golang.org/adk/v2): one [Toolset] added to
// llmagent.Config.Toolsets gives the model the four memory tools and puts
// the fresh MEMORY.md snapshot beside the latest user prompt of every model
// request.
//
//	mem, err := memory.New(store, nil) // any agentmem store
//	agent, err := llmagent.New(llmagent.Config{
//		Name: "assistant", Model: model, Instruction: "...",
//		Toolsets: []tool.Toolset{agentmemadk.NewToolset(mem, nil)},
//	})
//
// The namespace defaults to the ADK user id (the userID given to
// runner.Run), escaped by [memory.EscapeNamespace] so that any id (an email,
// "team/alice") is one valid path segment and no id can reach another's
// files: each user gets a notebook of their own ("kamal@example.com" lives
// under "kamal_40example.com/main/"). Set memory.Options.Namespace or
// NamespaceFunc to choose another. The run id of
// a tool call is the ADK invocation id and its tool-call id the function
// call id, so a replayed call is never applied twice. Swapping the store
// never changes this code.
//
// Two more pieces are opt-in. [Options.HistoryWindow] bounds the contents
// of each model request and appends the oldest, left out, to the user's
// pruned.md in the background, exactly once per session event (add
// [Toolset.Plugin] to the runner, and call [Toolset.Close] on shutdown).
// [MemoryService] is ADK's own memory.Service (load_memory,
// preload_memory) over any agentmem store.
//
// # Errors
//
// Mistakes the model can fix come back to it as {"error": "..."} results.
// Errors it cannot fix (a reused function call id with other arguments, a
// backend failure, an invalid namespace) also reach the model, as ADK shows
// every tool error to the model, but redacted by [memory.Redact]: they name
// no path, namespace or content. [Options.OnError] receives them unredacted.
// A snapshot failure fails the model request only with
// memory.Options.InjectionErrors set to memory.RaiseErrors; a namespace
// resolver failure always does. The history window follows the same
// policy for its background appends (see [HistoryWindow]); its own
// sentinels are [ErrNoSession] and pruned.ErrQueueClosed. The memory
// service returns [memory.ErrNoUser], [ErrNoApp] and the store's errors.
//
// # Consistency
//
// The snapshot is read from the store before every model request, so a
// write made by a tool in the same turn shows in the next request. It is
// added to the request only: ADK rebuilds each request from the session
// events, so injected text never lands in the session history and never
// piles up.
//
// # Capabilities
//
// The Toolset implements ADK's request-processor hook (ProcessRequest) for
// injection, and each tool the function-tool interface (Declaration, Run)
// with the notebook's strict JSON Schemas as ParametersJsonSchema. Several
// memories can share one agent: give each its own AgentName (or
// namespace), ToolPrefix and Heading, and add one Toolset per memory.
package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// Options configures a [Toolset]. Nil means defaults.
type Options struct {
	// OnError, when set, receives every Go error of a tool call, and of a
	// snapshot that fails the request (memory.Options.InjectionErrors set
	// to memory.RaiseErrors, or a namespace resolver failure), with its
	// full detail (for logging); the model only sees a redacted message.
	// Snapshot errors ignored in the default mode reach the memory's
	// Tracer (memory.Options.Tracer) instead. It also receives every
	// failed append of the history window (in both modes), from the
	// window's goroutine: it must not call Flush or Close.
	OnError func(ctx context.Context, err error)
	// HistoryWindow, when its Max is set, bounds the contents of every
	// model request and appends the oldest, left out, to the user's
	// notebook in the background (see [HistoryWindow]). Call
	// [Toolset.Close] on shutdown so that nothing queued is lost.
	HistoryWindow HistoryWindow
}

// Toolset is a notebook as an ADK toolset. It is safe for concurrent use.
type Toolset struct {
	mem    *memory.Memory
	opts   Options
	tools  []tool.Tool
	pruner *pruner // nil without a history window
	err    error   // ErrNilMemory, a bad HistoryWindow.Consolidate, or nil
}

// requestProcessor and functionTool mirror the interfaces ADK looks for
// (internal/toolinternal), so the compiler checks that we implement them.
type requestProcessor interface {
	ProcessRequest(ctx agent.Context, req *model.LLMRequest) error
}

type functionTool interface {
	tool.Tool
	Declaration() *genai.FunctionDeclaration
	Run(ctx agent.Context, args any) (map[string]any, error)
}

var (
	_ tool.Toolset     = (*Toolset)(nil)
	_ requestProcessor = (*Toolset)(nil)
	_ functionTool     = (*memTool)(nil)
	_ requestProcessor = (*memTool)(nil)
)

// ErrNilMemory reports a [Toolset] made by NewToolset from a nil notebook:
// its Tools and ProcessRequest return it, so the agent's run fails with it.
// It wraps store.ErrNilArgument.
var ErrNilMemory = fmt.Errorf("adk: pass a notebook (memory.New) to NewToolset, not nil: %w", store.ErrNilArgument)

// NewToolset returns the toolset for mem. Add it to
// llmagent.Config.Toolsets. With a nil mem the toolset has no tools and
// fails every request with [ErrNilMemory]; with a
// [HistoryWindow].Consolidate that has no Model, likewise with
// pruned.ErrNilModel.
func NewToolset(mem *memory.Memory, opts *Options) *Toolset {
	t := &Toolset{mem: mem}
	if opts != nil {
		t.opts = *opts
	}
	if mem == nil {
		t.err = ErrNilMemory
		return t
	}
	for _, spec := range mem.Tools() {
		t.tools = append(t.tools, &memTool{set: t, spec: spec})
	}
	if t.opts.HistoryWindow.Max > 0 {
		p, err := newPruner(mem, t.opts.HistoryWindow, t.opts.OnError)
		if err != nil {
			t.err, t.tools = err, nil
			return t
		}
		t.pruner = p
	}
	return t
}

// Name is the memory's id ("memory", or "memory-<agent name>").
func (t *Toolset) Name() string {
	if t.mem == nil {
		return "memory"
	}
	return t.mem.ID()
}

// Tools returns the four memory tools ([ErrNilMemory] for a nil notebook).
func (t *Toolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	if t.err != nil {
		return nil, t.err
	}
	return slices.Clone(t.tools), nil
}

// ProcessRequest runs before every model request: it adds the memory
// guidance to the system instruction and the fresh snapshot, as a text
// part, to the content holding the latest user prompt. With a history
// window, it leaves the oldest contents out of the request, before the
// snapshot is added, and queues them for the pruned-history file.
func (t *Toolset) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	if t.err != nil {
		return t.err
	}
	if g := t.mem.Instructions(); g != "" {
		addInstruction(req, g)
	}
	block, err := t.mem.Snapshot(ctx, memory.EscapeNamespace(ctx.UserID()))
	if err != nil {
		t.report(ctx, err)
		return fmt.Errorf("adk: memory snapshot: %w", err)
	}
	if t.pruner != nil {
		kept, err := t.pruner.prune(ctx, req.Contents, block != "")
		if err != nil {
			return err
		}
		req.Contents = kept
	}
	if block != "" {
		addBeforePrompt(req, block)
	}
	return nil
}

func (t *Toolset) report(ctx context.Context, err error) {
	if t.opts.OnError != nil {
		t.opts.OnError(ctx, err)
	}
}

// addInstruction appends text to the system instruction once.
func addInstruction(req *model.LLMRequest, text string) {
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	si := req.Config.SystemInstruction
	if si == nil {
		req.Config.SystemInstruction = genai.NewContentFromText(text, genai.RoleUser)
		return
	}
	for _, p := range si.Parts {
		if p != nil && p.Text == text {
			return
		}
	}
	cp := *si
	cp.Parts = append(slices.Clip(si.Parts), genai.NewPartFromText(text))
	req.Config.SystemInstruction = &cp
}

// addBeforePrompt appends the block to the latest user-role content that
// holds text (the latest user prompt), so that in a tool loop it stays with
// the prompt rather than following the function responses. Without one, it
// becomes a user content of its own at the end. Contents are copied, never
// changed in place.
func addBeforePrompt(req *model.LLMRequest, block string) {
	part := genai.NewPartFromText(block)
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c == nil || c.Role != genai.RoleUser || !hasText(c) {
			continue
		}
		cp := *c
		cp.Parts = append(slices.Clip(c.Parts), part)
		req.Contents = append(slices.Clip(req.Contents[:i]), append([]*genai.Content{&cp}, req.Contents[i+1:]...)...)
		return
	}
	req.Contents = append(slices.Clip(req.Contents), genai.NewContentFromParts([]*genai.Part{part}, genai.RoleUser))
}

func hasText(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought && !strings.HasPrefix(p.Text, memory.BlockOpen) {
			return true
		}
	}
	return false
}

// memTool is one memory tool as an ADK function tool.
type memTool struct {
	set  *Toolset
	spec memory.ToolSpec
}

func (m *memTool) Name() string        { return m.spec.Name }
func (m *memTool) Description() string { return m.spec.Description }
func (m *memTool) IsLongRunning() bool { return false }

// Declaration declares the tool with its strict JSON Schema.
func (m *memTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:                 m.spec.Name,
		Description:          m.spec.Description,
		ParametersJsonSchema: m.spec.InputSchema,
	}
}

// ProcessRequest adds the declaration to the request (ADK requires every
// tool to have it).
func (m *memTool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return toolutils.PackTool(req, m)
}

// Run dispatches the call to the notebook, scoped by the ADK user id, with
// the invocation id as run id and the function call id as tool-call id.
func (m *memTool) Run(ctx agent.Context, args any) (map[string]any, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return map[string]any{"error": "Invalid arguments: pass a JSON object with string values."}, nil
	}
	in := memory.Invocation{Namespace: memory.EscapeNamespace(ctx.UserID()), RunID: ctx.InvocationID(), ToolCallID: ctx.FunctionCallID()}
	res, err := m.set.mem.Call(ctx, in, m.spec.Name, raw)
	if err != nil {
		m.set.report(ctx, err)
		return nil, memory.Redact(err)
	}
	return resultMap(res)
}

// resultMap turns a notebook result into the map ADK sends back: a string
// (read_memory) as {"result": text}, anything else as its JSON object.
func resultMap(res any) (map[string]any, error) {
	if s, ok := res.(string); ok {
		return map[string]any{"result": s}, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
