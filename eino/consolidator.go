package eino

import (
	"context"
	"errors"
	"github.com/agentmem/agentmem/core/memory/pruned"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// Model turns an Eino chat model into the model behind
// pruned.Consolidate: a system and a user message in, the
// answer's content out, the usage from its ResponseMeta. id is recorded
// as the model's id (Eino messages carry none); "" means "unknown". A nil
// chat model is an error on use.
func Model(cm model.BaseChatModel, id string) pruned.Model { return chatModel{cm, id} }

type chatModel struct {
	cm model.BaseChatModel
	id string
}

func (m chatModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	if m.cm == nil {
		return pruned.ModelResponse{}, errors.New("eino: Model needs a chat model, got nil")
	}
	var opts []model.Option
	if req.MaxOutputTokens > 0 {
		opts = append(opts, model.WithMaxTokens(req.MaxOutputTokens))
	}
	msg, err := m.cm.Generate(ctx, []*schema.Message{schema.SystemMessage(req.System), schema.UserMessage(req.User)}, opts...)
	if err != nil {
		return pruned.ModelResponse{}, err
	}
	if msg == nil {
		return pruned.ModelResponse{}, errors.New("eino: the chat model returned no message")
	}
	out := pruned.ModelResponse{Text: msg.Content, Model: m.id}
	if msg.ResponseMeta != nil && msg.ResponseMeta.Usage != nil {
		u := msg.ResponseMeta.Usage
		out.Usage = pruned.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	}
	return out, nil
}
