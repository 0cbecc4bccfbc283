// Package genkittest provides a scripted Genkit model for tests and
// examples, defined with genkit.DefineModelAction: it plays canned tool
// requests and answers instead of calling an API, and records every request
// it receives, so genkit.Generate can be driven end to end with no network
// and no key.
package genkittest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/memory"
)

// Step is one model response: a tool request, or a final text answer.
type Step struct {
	// Call, when set, is the tool request the model makes; its Ref is the
	// tool-call id.
	Call *ai.ToolRequest
	// Text is the final answer when Call is nil.
	Text string
}

// Model is a scripted model. For each request it finds the latest user
// prompt, counts the model messages since, and plays that step of the
// prompt's script; after the last step it answers "ok". It is safe for
// concurrent use.
type Model struct {
	ai.Model
	mu       sync.Mutex
	scripts  map[string][]Step
	requests []*ai.ModelRequest
}

// Define registers a scripted model named name on g, playing scripts keyed
// by user prompt text.
func Define(g *genkit.Genkit, name string, scripts map[string][]Step) *Model {
	m := &Model{scripts: scripts}
	m.Model = genkit.DefineModelAction(g, name,
		&ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true}},
		func(_ context.Context, req *ai.ModelRequest, _ map[string]any, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return m.generate(req)
		})
	return m
}

// Requests returns deep copies of the requests received so far.
func (m *Model) Requests() []*ai.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*ai.ModelRequest(nil), m.requests...)
}

func (m *Model) generate(req *ai.ModelRequest) (*ai.ModelResponse, error) {
	var cp ai.ModelRequest
	b, err := json.Marshal(req)
	if err == nil {
		err = json.Unmarshal(b, &cp)
	}
	if err != nil {
		return nil, err
	}
	prompt, turn := latestPrompt(req.Messages)
	m.mu.Lock()
	m.requests = append(m.requests, &cp)
	script, ok := m.scripts[prompt]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("genkittest: no script for prompt %q", prompt)
	}
	step := Step{Text: "ok"}
	if turn < len(script) {
		step = script[turn]
	}
	msg := ai.NewModelTextMessage(step.Text)
	if step.Call != nil {
		call := *step.Call
		msg = ai.NewModelMessage(ai.NewToolRequestPart(&call))
	}
	return &ai.ModelResponse{Message: msg, FinishReason: ai.FinishReasonStop, Request: req}, nil
}

// latestPrompt returns the text of the latest user prompt (memory blocks
// excluded) and how many model messages follow it.
func latestPrompt(msgs []*ai.Message) (string, int) {
	turns := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := msgs[i]
		if msg == nil {
			continue
		}
		if msg.Role == ai.RoleModel {
			turns++
			continue
		}
		if msg.Role != ai.RoleUser {
			continue
		}
		var texts []string
		for _, p := range msg.Content {
			if p != nil && p.IsText() && p.Text != "" && !strings.HasPrefix(p.Text, memory.BlockOpen) {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n"), turns
		}
	}
	return "", turns
}

// MemoryBlocks returns the text parts of msgs that are memory blocks.
func MemoryBlocks(msgs []*ai.Message) []string {
	var out []string
	for _, msg := range msgs {
		if msg == nil {
			continue
		}
		for _, p := range msg.Content {
			if p != nil && strings.HasPrefix(p.Text, memory.BlockOpen) {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// ToolResponse returns the output of the tool response to call ref in
// msgs, as a JSON object (a string output as {"result": text}), or nil.
func ToolResponse(msgs []*ai.Message, ref string) map[string]any {
	for _, msg := range msgs {
		if msg == nil {
			continue
		}
		for _, p := range msg.Content {
			if p == nil || p.ToolResponse == nil || p.ToolResponse.Ref != ref {
				continue
			}
			if s, ok := p.ToolResponse.Output.(string); ok {
				return map[string]any{"result": s}
			}
			b, _ := json.Marshal(p.ToolResponse.Output)
			var out map[string]any
			if json.Unmarshal(b, &out) != nil {
				return nil
			}
			return out
		}
	}
	return nil
}

// ToolNames returns the names of the tools offered in req.
func ToolNames(req *ai.ModelRequest) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// Text returns the text of msg's parts joined by newlines.
func Text(msg *ai.Message) string {
	var texts []string
	for _, p := range msg.Content {
		if p != nil && p.IsText() {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Call returns a tool-request step with a fixed ref.
func Call(ref, name string, args map[string]any) Step {
	return Step{Call: &ai.ToolRequest{Ref: ref, Name: name, Input: args}}
}

// Answer returns a final-answer step.
func Answer(s string) Step { return Step{Text: s} }
