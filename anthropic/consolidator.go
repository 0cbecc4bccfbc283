package anthropic

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentmem/agentmem/core/store"
)

// DefaultConsolidationMaxTokens is the answer bound [Model] asks for when
// the request sets none.
const DefaultConsolidationMaxTokens = 4096

// Model turns the Anthropic SDK's Messages API into the model behind
// pruned.Consolidate: one Messages.New call with the system text
// as the system prompt and the user text as one user message; the answer's
// text blocks joined, its usage, and the model id the API reports. Pass
// &client.Messages and the model to use. A nil messages is an error on use
// (store.ErrNilArgument); an answer without text, or cut at max_tokens,
// is [ErrAnswer]; an error of the API says its status, type, message and
// request id, and whether to try again, wrapping the SDK's *sdk.Error.
func Model(messages *sdk.MessageService, model sdk.Model) pruned.Model {
	return claudeModel{messages, model}
}

type claudeModel struct {
	messages *sdk.MessageService
	model    sdk.Model
}

func (c claudeModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	if c.messages == nil {
		return pruned.ModelResponse{}, fmt.Errorf("anthropic: pass Model the client's Messages service (&client.Messages), not nil: %w", store.ErrNilArgument)
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
		return pruned.ModelResponse{}, apiError(c.model, err)
	}
	var text strings.Builder
	var kinds []string
	for _, b := range msg.Content {
		kinds = append(kinds, b.Type)
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	usage := pruned.Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)}
	switch {
	case msg.StopReason == sdk.StopReasonMaxTokens:
		return pruned.ModelResponse{Model: string(msg.Model), Usage: usage}, fmt.Errorf("%w: %s's answer was cut at max_tokens (%d): raise the answer bound (MaxOutputTokens, agentmem consolidate --max-output-tokens)", ErrAnswer, msg.Model, maxTokens)
	case text.Len() == 0:
		return pruned.ModelResponse{Model: string(msg.Model), Usage: usage}, fmt.Errorf("%w: %s answered no text (stop reason %q, content %v): consolidation needs the edits as text", ErrAnswer, msg.Model, msg.StopReason, kinds)
	}
	return pruned.ModelResponse{Text: text.String(), Model: string(msg.Model), Usage: usage}, nil
}

// ErrAnswer reports an answer of the Messages API that [Model] cannot
// hand to consolidation: no text (only tool_use blocks, say), or text cut
// at max_tokens.
var ErrAnswer = errors.New("anthropic: the model's answer is not a whole text")

// apiError says what an error of the Messages API means: the HTTP status,
// the API's error type and message, the request id, and whether to try
// again (429, 5xx and 529 overloaded) or fix the request or key. The SDK's
// *sdk.Error (with the URL and the raw body) stays reachable with
// errors.As.
func apiError(model sdk.Model, err error) error {
	var e *sdk.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("anthropic: the Messages API (model %s) did not answer: %w", model, err)
	}
	what := strings.TrimSpace(fmt.Sprintf("%d %s", e.StatusCode, e.Type()))
	if e.Message != "" {
		what += ": " + e.Message
	}
	if e.RequestID != "" {
		what += " (request " + e.RequestID + ")"
	}
	advice := "fix the request or the API key"
	if e.StatusCode == 429 || e.StatusCode >= 500 {
		advice = "try again later"
	}
	return &wrapped{fmt.Sprintf("anthropic: the Messages API (model %s) answered %s: %s", model, what, advice), err}
}

// wrapped is an error with its own text that unwraps to another (whose
// text, here the SDK's with the URL and the raw body, it leaves out).
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }
