package adk

import (
	"context"
	"errors"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"strings"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// Model turns an ADK model.LLM into the model behind
// pruned.Consolidate: the system text as the request's system
// instruction, the user text as one user content, the answer's text parts
// joined (thoughts left out), the usage from UsageMetadata and the model
// id from ModelVersion, else llm.Name(). A nil llm is an error on use.
func Model(llm model.LLM) pruned.Model { return llmModel{llm} }

type llmModel struct{ llm model.LLM }

func (m llmModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	if m.llm == nil {
		return pruned.ModelResponse{}, errors.New("adk: Model needs a model.LLM, got nil")
	}
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(req.System, genai.RoleUser)}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxOutputTokens)
	}
	r := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText(req.User, genai.RoleUser)}, Config: cfg}
	out := pruned.ModelResponse{Model: m.llm.Name()}
	var text strings.Builder
	for resp, err := range m.llm.GenerateContent(ctx, r, false) {
		if err != nil {
			return pruned.ModelResponse{}, err
		}
		if resp == nil {
			continue
		}
		if resp.ModelVersion != "" {
			out.Model = resp.ModelVersion
		}
		if u := resp.UsageMetadata; u != nil {
			out.Usage = pruned.Usage{InputTokens: int(u.PromptTokenCount), OutputTokens: int(u.CandidatesTokenCount)}
		}
		if resp.Content != nil && !resp.Partial {
			for _, p := range resp.Content.Parts {
				if p != nil && !p.Thought {
					text.WriteString(p.Text)
				}
			}
		}
	}
	out.Text = text.String()
	return out, nil
}
