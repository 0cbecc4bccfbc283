package eino

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// DefaultUserIDKey is the session value (adk.WithSessionValues) read for
// the user id when the context carries none from [memory.WithUserID].
const DefaultUserIDKey = "user_id"

// errNoUser is [memory.ErrNoUser] with how to give the id in Eino: a tool
// call and the model request return it when neither the context
// ([memory.WithUserID]) nor the session values name the user whose notebook to
// use.
var errNoUser = fmt.Errorf("%w: call memory.WithUserID or set the user_id session value", memory.ErrNoUser)

// ErrNilMemory is returned by [NewMiddleware] for a nil notebook. It wraps
// store.ErrNilArgument.
var ErrNilMemory = fmt.Errorf("eino: pass a notebook (memory.New) to NewMiddleware, not nil: %w", store.ErrNilArgument)

// Options configures a [Middleware]. Nil means defaults.
type Options struct {
	// UserIDKey is the session value holding the user id when the context
	// has none from [memory.WithUserID]. Default [DefaultUserIDKey].
	UserIDKey string
	// HistoryWindow, when its Max is set, bounds the messages of every
	// model call and appends the oldest, left out, to the user's notebook
	// in the background (see [HistoryWindow]). Call [Middleware.Close] on
	// shutdown so that nothing queued is lost.
	HistoryWindow HistoryWindow
}

// Middleware is a notebook as an Eino ChatModelAgent middleware. It is safe
// for concurrent use.
type Middleware struct {
	*adk.BaseChatModelAgentMiddleware
	mem   *memory.Memory
	opts  Options
	tools []tool.BaseTool
	win   *pruned.Window // nil without a history window
}

var (
	_ adk.ChatModelAgentMiddleware = (*Middleware)(nil)
	_ tool.InvokableTool           = (*memTool)(nil)
	_ model.BaseChatModel          = (*injectingModel)(nil)
)

// NewMiddleware returns the middleware for mem. Add it to
// adk.ChatModelAgentConfig.Handlers. It fails with [ErrNilMemory] for a
// nil mem and with pruned.ErrNilModel for a HistoryWindow.Consolidate
// without a Model.
func NewMiddleware(mem *memory.Memory, opts *Options) (*Middleware, error) {
	if mem == nil {
		return nil, ErrNilMemory
	}
	m := &Middleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, mem: mem}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.UserIDKey == "" {
		m.opts.UserIDKey = DefaultUserIDKey
	}
	if o := m.opts.HistoryWindow.WindowOptions; o.Max > 0 {
		o.Op = cmp.Or(o.Op, "eino-prune:")
		var err error
		if m.win, err = pruned.NewWindow(mem, &o); err != nil {
			return nil, fmt.Errorf("eino: HistoryWindow.Consolidate: %w", err)
		}
	}
	for _, spec := range mem.Tools() {
		b, err := json.Marshal(spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("eino: %s schema: %w", spec.Name, err)
		}
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("eino: %s schema: %w", spec.Name, err)
		}
		m.tools = append(m.tools, &memTool{mw: m, info: &schema.ToolInfo{
			Name: spec.Name, Desc: spec.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(s),
		}})
	}
	return m, nil
}

// Tools returns the four memory tools, for agents the middleware does not
// run in. A ChatModelAgent with the middleware gets them without this.
func (m *Middleware) Tools() []tool.BaseTool { return slices.Clone(m.tools) }

// BeforeAgent adds the memory tools to the run (those not already there by
// name) and gives the run its id.
func (m *Middleware) BeforeAgent(ctx context.Context, rc *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	have := map[string]bool{}
	for _, t := range rc.Tools {
		if info, err := t.Info(ctx); err == nil && info != nil {
			have[info.Name] = true
		}
	}
	for _, t := range m.tools {
		if name := t.(*memTool).info.Name; !have[name] {
			rc.Tools = append(rc.Tools, t)
		}
	}
	if memory.RunID(ctx) == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		ctx = memory.WithRunID(ctx, "eino-"+hex.EncodeToString(b[:]))
	}
	return ctx, rc, nil
}

// WrapModel wraps every model call so that its input carries the memory
// guidance in the system message and the fresh snapshot beside the latest
// user prompt. The agent's messages are copied, never changed: nothing
// injected enters the conversation history.
func (m *Middleware) WrapModel(_ context.Context, inner model.BaseChatModel, _ *adk.ModelContext) (model.BaseChatModel, error) {
	return &injectingModel{mw: m, inner: inner}, nil
}

// userID resolves the namespace of the run in ctx.
func (m *Middleware) userID(ctx context.Context) (string, error) {
	if id := memory.UserID(ctx); id != "" {
		return memory.EscapeNamespace(id), nil
	}
	if v, ok := adk.GetSessionValue(ctx, m.opts.UserIDKey); ok {
		if id, _ := v.(string); id != "" {
			return memory.EscapeNamespace(id), nil
		}
	}
	return "", errNoUser
}

// injectingModel is the model as the middleware hands it to the agent.
type injectingModel struct {
	mw    *Middleware
	inner model.BaseChatModel
}

// Generate implements model.BaseChatModel.
func (im *injectingModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	msgs, err := im.mw.inject(ctx, input)
	if err != nil {
		return nil, err
	}
	return im.inner.Generate(ctx, msgs, opts...)
}

// Stream implements model.BaseChatModel.
func (im *injectingModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msgs, err := im.mw.inject(ctx, input)
	if err != nil {
		return nil, err
	}
	return im.inner.Stream(ctx, msgs, opts...)
}

// inject returns a copy of msgs with the guidance and the snapshot added
// (and, with a history window, the oldest messages left out).
// A snapshot failure fails the call only in memory.RaiseErrors mode (the
// notebook returns no error otherwise); a missing user always does.
func (m *Middleware) inject(ctx context.Context, msgs []*schema.Message) ([]*schema.Message, error) {
	ns, err := m.userID(ctx)
	if err != nil {
		return nil, err
	}
	block, err := m.mem.Snapshot(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("eino: memory snapshot: %w", err)
	}
	out := slices.Clone(msgs)
	if m.win != nil {
		if out, err = m.prune(ctx, ns, out, block != ""); err != nil {
			return nil, err
		}
	}
	if g := m.mem.Instructions(); g != "" {
		out = addInstruction(out, g)
	}
	if block != "" {
		out = addBeforePrompt(out, block)
	}
	return out, nil
}

// addInstruction appends text to the first system message, or puts a system
// message holding it first.
func addInstruction(msgs []*schema.Message, text string) []*schema.Message {
	for i, msg := range msgs {
		if msg == nil || msg.Role != schema.System {
			continue
		}
		if strings.Contains(msg.Content, text) {
			return msgs
		}
		cp := *msg
		cp.Content = strings.TrimRight(msg.Content, "\n") + "\n\n" + text
		if msg.Content == "" {
			cp.Content = text
		}
		msgs[i] = &cp
		return msgs
	}
	return append([]*schema.Message{schema.SystemMessage(text)}, msgs...)
}

// addBeforePrompt appends the block to the latest user message that holds
// text (the latest user prompt), so that in a tool loop it stays with the
// prompt rather than following the tool results; without one, it becomes a
// user message of its own at the end.
func addBeforePrompt(msgs []*schema.Message, block string) []*schema.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := msgs[i]
		if msg == nil || msg.Role != schema.User {
			continue
		}
		cp := *msg
		switch {
		case len(msg.UserInputMultiContent) > 0:
			cp.UserInputMultiContent = append(slices.Clip(msg.UserInputMultiContent),
				schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: block})
		case msg.Content != "":
			cp.Content = msg.Content + "\n\n" + block
		default:
			continue
		}
		msgs[i] = &cp
		return msgs
	}
	return append(msgs, schema.UserMessage(block))
}

// memTool is one memory tool as an Eino invokable tool.
type memTool struct {
	mw   *Middleware
	info *schema.ToolInfo
}

// Info implements tool.BaseTool: the tool's name, description and strict
// JSON Schema.
func (t *memTool) Info(context.Context) (*schema.ToolInfo, error) {
	cp := *t.info
	return &cp, nil
}

// InvokableRun dispatches the call to the notebook, scoped by the run's
// user, with the run id and Eino's tool-call id. Mistakes the model can fix
// come back as {"error": "..."} results; other errors end the run.
func (t *memTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	ns, err := t.mw.userID(ctx)
	if err != nil {
		return "", err
	}
	inv := memory.Invocation{Namespace: ns, RunID: memory.RunID(ctx), ToolCallID: compose.GetToolCallID(ctx)}
	res, err := t.mw.mem.Call(ctx, inv, t.info.Name, json.RawMessage(args))
	if err != nil {
		return "", fmt.Errorf("eino: %s: %w", t.info.Name, err)
	}
	if s, ok := res.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return "", fmt.Errorf("eino: %s: %w", t.info.Name, err)
	}
	return string(b), nil
}
