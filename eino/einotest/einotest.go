// Package einotest provides a scripted Eino chat model for tests and
// examples: it plays canned tool calls and answers instead of calling an
// API, and records every request it receives, so a real Eino
// ChatModelAgent can be driven end to end with no network and no key.
package einotest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/memory"
)

// Step is one model response: a tool call, or a final text answer.
type Step struct {
	// Call, when set, is the tool call the model makes; its ID is the
	// tool-call id.
	Call *schema.ToolCall
	// Text is the final answer when Call is nil.
	Text string
}

// Request is one recorded model request.
type Request struct {
	// Messages is a deep copy of the messages the model received.
	Messages []*schema.Message
	// Tools are the tools offered to the model.
	Tools []*schema.ToolInfo
}

// Model is a scripted model.ToolCallingChatModel. For each request it finds
// the latest user prompt, counts the assistant messages since, and plays
// that step of the prompt's script; after the last step it answers "ok".
// A request without a user prompt (a history window cut it from a long
// tool loop) plays the step after the previous request's. It is safe for
// concurrent use.
type Model struct {
	mu         sync.Mutex
	scripts    map[string][]Step
	requests   []Request
	lastPrompt string // the prompt and step of the previous request
	lastTurn   int
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// NewModel returns a model that plays scripts, keyed by user prompt text.
func NewModel(scripts map[string][]Step) *Model {
	return &Model{scripts: scripts}
}

// Requests returns the requests received so far.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// WithTools implements model.ToolCallingChatModel; the agent passes its
// tools with every request (model.WithTools), which is what is recorded.
func (m *Model) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// Generate implements model.BaseChatModel.
func (m *Model) Generate(_ context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	var cp []*schema.Message
	b, err := json.Marshal(input)
	if err == nil {
		err = json.Unmarshal(b, &cp)
	}
	if err != nil {
		return nil, err
	}
	prompt, turn := latestPrompt(input)
	m.mu.Lock()
	if prompt == "" && m.lastPrompt != "" { // a history window cut the prompt: the tool loop goes on
		prompt, turn = m.lastPrompt, m.lastTurn+1
	}
	m.lastPrompt, m.lastTurn = prompt, turn
	m.requests = append(m.requests, Request{Messages: cp, Tools: model.GetCommonOptions(nil, opts...).Tools})
	script, ok := m.scripts[prompt]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("einotest: no script for prompt %q", prompt)
	}
	step := Step{Text: "ok"}
	if turn < len(script) {
		step = script[turn]
	}
	if step.Call != nil {
		return schema.AssistantMessage("", []schema.ToolCall{*step.Call}), nil
	}
	return schema.AssistantMessage(step.Text, nil), nil
}

// Stream implements model.BaseChatModel with one chunk.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// latestPrompt returns the text of the latest user prompt (memory block
// excluded) and how many assistant messages follow it.
func latestPrompt(msgs []*schema.Message) (string, int) {
	turns := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := msgs[i]
		if msg == nil {
			continue
		}
		if msg.Role == schema.Assistant {
			turns++
			continue
		}
		if msg.Role != schema.User {
			continue
		}
		if text := Prompt(msg); text != "" {
			return text, turns
		}
	}
	return "", turns
}

// Prompt returns a user message's text without the memory block.
func Prompt(msg *schema.Message) string {
	text, _, _ := strings.Cut(msg.Content, memory.BlockOpen)
	return strings.TrimSpace(text)
}

// MemoryBlocks returns the memory blocks in msgs, in order.
func MemoryBlocks(msgs []*schema.Message) []string {
	var out []string
	for _, msg := range msgs {
		if msg == nil {
			continue
		}
		texts := []string{msg.Content}
		for _, p := range msg.UserInputMultiContent {
			texts = append(texts, p.Text)
		}
		for _, t := range texts {
			for {
				i := strings.Index(t, memory.BlockOpen)
				if i < 0 {
					break
				}
				j := strings.Index(t[i:], memory.BlockClose)
				if j < 0 {
					out = append(out, t[i:])
					break
				}
				out = append(out, t[i:i+j+len(memory.BlockClose)])
				t = t[i+j+len(memory.BlockClose):]
			}
		}
	}
	return out
}

// ToolResult returns the content of the tool message answering call id in
// msgs, or "".
func ToolResult(msgs []*schema.Message, id string) string {
	for _, msg := range msgs {
		if msg != nil && msg.Role == schema.Tool && msg.ToolCallID == id {
			return msg.Content
		}
	}
	return ""
}

// ToolNames returns the names of the tools in infos.
func ToolNames(infos []*schema.ToolInfo) []string {
	var out []string
	for _, t := range infos {
		out = append(out, t.Name)
	}
	return out
}

// Call returns a tool-call step with a fixed id and JSON arguments.
func Call(id, name string, args map[string]any) Step {
	b, _ := json.Marshal(args) // plain JSON values always encode
	return Step{Call: &schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: string(b)}}}
}

// Text returns a final-answer step.
func Text(s string) Step { return Step{Text: s} }
