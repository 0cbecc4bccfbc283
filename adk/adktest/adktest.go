// Package adktest provides a scripted ADK model for tests and examples: it
// plays canned function calls and answers instead of calling an API, and
// records every request it receives, so a real ADK runner can be driven
// end to end with no network and no key.
package adktest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/platform"
	"google.golang.org/genai"

	"github.com/agentmem/agentmem/core/memory"
)

// Step is one model response: a function call, or a final text answer.
type Step struct {
	// Call, when set, is the function call the model makes. Give it an ID
	// to control the tool-call id (ADK invents one otherwise).
	Call *genai.FunctionCall
	// Text is the final answer when Call is nil.
	Text string
	// Func, when set, decides the step from the request instead (for a
	// model that reacts to what it sees, such as the injected memory).
	Func func(req *model.LLMRequest) Step
}

// Request is one recorded model request.
type Request struct {
	// UserID is the ADK user the request was made for.
	UserID string
	// LLMRequest is a deep copy of the request as the model received it.
	*model.LLMRequest
}

// Model is a scripted model.LLM. For each model request it finds the
// latest user prompt, counts the model turns since, and plays that step of
// the prompt's script; after the last step it answers "ok". When the
// request no longer holds the prompt (a history window cut it), it takes
// the invocation's user content and counts the invocation's model events. It is safe for
// concurrent use.
type Model struct {
	mu       sync.Mutex
	scripts  map[string][]Step
	requests []Request
}

var _ model.LLM = (*Model)(nil)

// NewModel returns a model that plays scripts, keyed by user prompt text.
func NewModel(scripts map[string][]Step) *Model {
	return &Model{scripts: scripts}
}

// Name implements model.LLM.
func (m *Model) Name() string { return "adktest-scripted" }

// Requests returns the requests received so far.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// GenerateContent implements model.LLM.
func (m *Model) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		cp, err := deepCopy(req)
		if err != nil {
			yield(nil, err)
			return
		}
		user := ""
		ic, _ := ctx.(agent.InvocationContext)
		if ic != nil && ic.Session() != nil {
			user = ic.Session().UserID()
		}
		prompt, turn := latestPrompt(req)
		m.mu.Lock()
		m.requests = append(m.requests, Request{UserID: user, LLMRequest: cp})
		script, ok := m.scripts[prompt]
		m.mu.Unlock()
		if !ok && ic != nil { // the prompt was cut from the request (a history window)
			prompt, turn = invocationPrompt(ic)
			m.mu.Lock()
			script, ok = m.scripts[prompt]
			m.mu.Unlock()
		}
		if !ok {
			yield(nil, fmt.Errorf("adktest: no script for prompt %q", prompt))
			return
		}
		step := Step{Text: "ok"}
		if turn < len(script) {
			step = script[turn]
		}
		if step.Func != nil {
			step = step.Func(cp)
		}
		content := genai.NewContentFromText(step.Text, genai.RoleModel)
		if step.Call != nil {
			call := *step.Call
			content = genai.NewContentFromParts([]*genai.Part{{FunctionCall: &call}}, genai.RoleModel)
		}
		yield(&model.LLMResponse{Content: content, TurnComplete: true}, nil)
	}
}

// latestPrompt returns the text of the latest user prompt (memory blocks
// excluded) and how many model contents follow it.
func latestPrompt(req *model.LLMRequest) (string, int) {
	turns := 0
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			turns++
			continue
		}
		var texts []string
		for _, p := range c.Parts {
			if p != nil && p.Text != "" && !strings.HasPrefix(p.Text, memory.BlockOpen) {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n"), turns
		}
	}
	return "", turns
}

// invocationPrompt returns the text of the invocation's user content and
// how many model contents the invocation has produced so far.
func invocationPrompt(ic agent.InvocationContext) (string, int) {
	var texts []string
	if c := ic.UserContent(); c != nil {
		for _, p := range c.Parts {
			if p != nil && p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
	}
	turns := 0
	if s := ic.Session(); s != nil {
		for ev := range s.Events().All() {
			if ev.InvocationID == ic.InvocationID() && ev.Content != nil && ev.Content.Role == genai.RoleModel {
				turns++
			}
		}
	}
	return strings.Join(texts, "\n"), turns
}

func deepCopy(r *model.LLMRequest) (*model.LLMRequest, error) {
	b, err := json.Marshal(r) // Tools is json:"-"; declarations live in Config.Tools
	if err != nil {
		return nil, err
	}
	var out model.LLMRequest
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MemoryBlocks returns the text parts of req that are injected memory
// blocks, in order, with the role of the content holding each.
func MemoryBlocks(req *model.LLMRequest) []string {
	var out []string
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && strings.HasPrefix(p.Text, memory.BlockOpen) {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// SystemText returns the system instruction's text parts joined by blank
// lines.
func SystemText(req *model.LLMRequest) string {
	if req.Config == nil || req.Config.SystemInstruction == nil {
		return ""
	}
	var texts []string
	for _, p := range req.Config.SystemInstruction.Parts {
		if p != nil && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// ToolNames returns the names of the functions declared to the model.
func ToolNames(req *model.LLMRequest) []string {
	var out []string
	if req.Config == nil {
		return out
	}
	for _, t := range req.Config.Tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			out = append(out, d.Name)
		}
	}
	return out
}

// FunctionResponse returns the response to the function call with id in
// req, or nil.
func FunctionResponse(req *model.LLMRequest, id string) map[string]any {
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.FunctionResponse != nil && p.FunctionResponse.ID == id {
				return p.FunctionResponse.Response
			}
		}
	}
	return nil
}

// Call returns a function-call step with a fixed id.
func Call(id, name string, args map[string]any) Step {
	return Step{Call: &genai.FunctionCall{ID: id, Name: name, Args: args}}
}

// Text returns a final-answer step.
func Text(s string) Step { return Step{Text: s} }

// Conversation returns a scripted conversation of n user prompts ("prompt
// 1", "prompt 2", …), each answered by the text "answer <i>": run the
// prompts in order, in one session, for a conversation of 2n contents.
func Conversation(n int) (prompts []string, scripts map[string][]Step) {
	scripts = make(map[string][]Step, n)
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("prompt %d", i)
		prompts = append(prompts, p)
		scripts[p] = []Step{Text(fmt.Sprintf("answer %d", i))}
	}
	return prompts, scripts
}

// Deterministic returns ctx with ADK's UUID and time providers replaced by
// a counter ("<prefix>-1", "<prefix>-2", …) and a clock that starts at
// start and ticks one second per call, so that a run made again with the
// same prefix and start produces the same event ids and timestamps (a
// replay).
func Deterministic(ctx context.Context, prefix string, start time.Time) context.Context {
	var mu sync.Mutex
	n, tick := 0, 0
	ctx = platform.WithUUIDProvider(ctx, func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s-%d", prefix, n)
	})
	return platform.WithTimeProvider(ctx, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick++
		return start.Add(time.Duration(tick) * time.Second)
	})
}
