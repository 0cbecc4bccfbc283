package genkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/status"
	gk "github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/memory"
)

// MiddlewareName is the name a [Notebook] has as a Genkit middleware.
const MiddlewareName = "agentmem/memory"

// errNoUser is [memory.ErrNoUser] with how to give the id in Genkit: a
// tool call and the model request return it when the context names no
// user whose notebook to use.
var errNoUser = fmt.Errorf("%w: call memory.WithUserID or set Options.UserID", memory.ErrNoUser)

// ErrNilArgument is returned by [Define] for a nil Genkit or notebook.
var ErrNilArgument = errors.New("genkit: pass Define a Genkit (genkit.Init) and a notebook (memory.New): one was nil")

// Options configures a [Notebook]. Nil means defaults.
type Options struct {
	// UserID returns the user of a generation from its context, for
	// example from the auth in core.FromContext(ctx). Default: the id given
	// by [memory.WithUserID]. An empty id is [memory.ErrNoUser].
	UserID func(ctx context.Context) (string, error)
}

// callKey is the context key of the tool-call ref a tool call runs with.
type callKey struct{}

// Notebook is a notebook as Genkit tools and middleware. It is safe for
// concurrent use.
type Notebook struct {
	mem   *memory.Memory
	opts  Options
	tools []ai.Tool
	names map[string]bool
}

var _ ai.Middleware = (*Notebook)(nil)

// Define registers the four memory tools of mem on g (genkit.DefineTool,
// with the notebook's JSON Schemas) and returns the notebook. Pass its
// [Notebook.Tools] with ai.WithTools and the notebook itself with
// ai.WithUse to every generation.
func Define(g *gk.Genkit, mem *memory.Memory, opts *Options) (*Notebook, error) {
	if g == nil || mem == nil {
		return nil, ErrNilArgument
	}
	n := &Notebook{mem: mem, names: map[string]bool{}}
	if opts != nil {
		n.opts = *opts
	}
	for _, spec := range mem.Tools() {
		name := spec.Name
		n.tools = append(n.tools, gk.DefineTool(g, name, spec.Description,
			func(tc *ai.ToolContext, in any) (any, error) { return n.call(tc, name, in) },
			ai.WithInputSchema(spec.InputSchema)))
		n.names[name] = true
	}
	return n, nil
}

// Tools returns the four memory tools, for ai.WithTools.
func (n *Notebook) Tools() []ai.ToolRef {
	out := make([]ai.ToolRef, len(n.tools))
	for i, t := range n.tools {
		out[i] = t
	}
	return out
}

// Name implements ai.Middleware.
func (n *Notebook) Name() string { return MiddlewareName }

// New implements ai.Middleware: the hooks of one Generate call. WrapModel
// injects the guidance and the snapshot into a copy of every model request;
// WrapTool gives the memory tools the run id and the tool-call id, and
// turns arguments that fail schema validation into a result the model can
// act on.
func (n *Notebook) New(ctx context.Context) (*ai.Hooks, error) {
	run := memory.RunID(ctx)
	if run == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		run = "genkit-" + hex.EncodeToString(b[:])
	}
	return &ai.Hooks{
		WrapModel: n.wrapModel,
		WrapTool: func(ctx context.Context, p *ai.ToolParams, next ai.ToolNext) (*ai.MultipartToolResponse, error) {
			if p.Tool == nil || p.Request == nil || !n.names[p.Tool.Name()] {
				return next(ctx, p)
			}
			ctx = context.WithValue(memory.WithRunID(ctx, run), callKey{}, p.Request.Ref)
			resp, err := next(ctx, p)
			if errors.Is(err, status.ErrInvalidInput) {
				// Genkit validated the arguments first: let the notebook
				// answer, as it does for any invalid call.
				out, err := n.call(ctx, p.Tool.Name(), p.Request.Input)
				if err != nil {
					return nil, err
				}
				return &ai.MultipartToolResponse{Output: out}, nil
			}
			return resp, err
		},
	}, nil
}

// userID resolves the namespace of the generation in ctx.
func (n *Notebook) userID(ctx context.Context) (string, error) {
	var id string
	if n.opts.UserID != nil {
		var err error
		if id, err = n.opts.UserID(ctx); err != nil {
			return "", err
		}
	} else {
		id = memory.UserID(ctx)
	}
	if id == "" {
		return "", errNoUser
	}
	return memory.EscapeNamespace(id), nil
}

// call dispatches one tool call to the notebook. Mistakes the model can
// fix come back as results ({"error": "..."}); other errors end the
// generation.
func (n *Notebook) call(ctx context.Context, name string, in any) (any, error) {
	ns, err := n.userID(ctx)
	if err != nil {
		return nil, err
	}
	args, err := json.Marshal(in)
	if err != nil {
		return map[string]any{"error": "Invalid arguments: pass a JSON object."}, nil
	}
	ref, _ := ctx.Value(callKey{}).(string)
	res, err := n.mem.Call(ctx, memory.Invocation{Namespace: ns, RunID: memory.RunID(ctx), ToolCallID: ref}, name, args)
	if err != nil {
		return nil, fmt.Errorf("genkit: %s: %w", name, err)
	}
	return res, nil
}

// wrapModel sends a copy of the request with the memory guidance in the
// system message and the fresh snapshot beside the latest user prompt, and
// gives the response the original request back, so that nothing injected
// enters resp.History(). A snapshot failure fails the call only in
// memory.RaiseErrors mode; a missing user always does.
func (n *Notebook) wrapModel(ctx context.Context, p *ai.ModelParams, next ai.ModelNext) (*ai.ModelResponse, error) {
	ns, err := n.userID(ctx)
	if err != nil {
		return nil, err
	}
	block, err := n.mem.Snapshot(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("genkit: memory snapshot: %w", err)
	}
	orig := p.Request
	req := *orig
	req.Messages = slices.Clone(orig.Messages)
	if g := n.mem.Instructions(); g != "" {
		req.Messages = addInstruction(req.Messages, g)
	}
	if block != "" {
		req.Messages = addBeforePrompt(req.Messages, block)
	}
	resp, err := next(ctx, &ai.ModelParams{Request: &req, Callback: p.Callback})
	if resp != nil && resp.Request != nil {
		resp.Request = orig
	}
	return resp, err
}

// addInstruction appends text as a part of the first system message, or
// puts a system message holding it first.
func addInstruction(msgs []*ai.Message, text string) []*ai.Message {
	for i, m := range msgs {
		if m == nil || m.Role != ai.RoleSystem {
			continue
		}
		if slices.ContainsFunc(m.Content, func(p *ai.Part) bool { return p != nil && p.Text == text }) {
			return msgs
		}
		cp := *m
		cp.Content = append(slices.Clip(m.Content), ai.NewTextPart(text))
		msgs[i] = &cp
		return msgs
	}
	return append([]*ai.Message{ai.NewSystemTextMessage(text)}, msgs...)
}

// addBeforePrompt appends the block as a text part of the latest user
// message that holds text (the latest user prompt), so that in a tool loop
// it stays with the prompt rather than following the tool responses;
// without one, it becomes a user message of its own at the end.
func addBeforePrompt(msgs []*ai.Message, block string) []*ai.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m == nil || m.Role != ai.RoleUser || !slices.ContainsFunc(m.Content, isPromptText) {
			continue
		}
		cp := *m
		cp.Content = append(slices.Clip(m.Content), ai.NewTextPart(block))
		msgs[i] = &cp
		return msgs
	}
	return append(msgs, ai.NewUserTextMessage(block))
}

func isPromptText(p *ai.Part) bool {
	return p != nil && p.IsText() && p.Text != "" && !strings.HasPrefix(p.Text, memory.BlockOpen)
}
