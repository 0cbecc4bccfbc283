package anthropic

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// DefaultConsolidationMaxTokens is the answer bound [Model] asks for when
// the request sets none.
const DefaultConsolidationMaxTokens = 4096

// Model turns the Anthropic SDK's Messages API into the model behind
// memory.Memory.Consolidate: one Messages.New call with the system text
// as the system prompt and the user text as one user message; the answer's
// text blocks joined, its usage, and the model id the API reports. Pass
// &client.Messages and the model to use. A nil messages is an error on use
// (store.ErrNilArgument).
func Model(messages *sdk.MessageService, model sdk.Model) memory.Model {
	return claudeModel{messages, model}
}

type claudeModel struct {
	messages *sdk.MessageService
	model    sdk.Model
}

func (c claudeModel) Generate(ctx context.Context, req memory.ModelRequest) (memory.ModelResponse, error) {
	if c.messages == nil {
		return memory.ModelResponse{}, fmt.Errorf("anthropic: pass Model the client's Messages service (&client.Messages), not nil: %w", store.ErrNilArgument)
	}
	maxTokens := int64(req.MaxOutputTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultConsolidationMaxTokens
	}
	msg, err := c.messages.New(ctx, sdk.MessageNewParams{
		Model:     c.model,
		MaxTokens: maxTokens,
		System:    []sdk.TextBlockParam{{Text: req.System}},
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(req.User))},
	})
	if err != nil {
		return memory.ModelResponse{}, err
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	return memory.ModelResponse{Text: text.String(), Model: string(msg.Model),
		Usage: memory.Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)}}, nil
}
