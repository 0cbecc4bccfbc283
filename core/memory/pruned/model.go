package pruned

import (
	"context"
)

// Model is the language model behind [Consolidate]: system and user
// text in, text out. The adapters in the adk, eino, genkit and anthropic
// modules turn each framework's model into one; [ModelFunc] turns a
// function into one (a scripted model in tests).
//
// Generate must not keep req after it returns. Its error is returned by
// Consolidate unchanged (wrapped), and nothing is written.
type Model interface {
	Generate(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// ModelRequest is one request to a [Model].
type ModelRequest struct {
	// System is the trusted instruction (see [DefaultConsolidationPrompt]).
	System string
	// User is the data to work on: the notebook and the pruned text, each
	// inside its own delimited block, then the answer's format.
	User string
	// MaxOutputTokens bounds the answer; 0 means the model's default.
	MaxOutputTokens int
}

// ModelResponse is a [Model]'s answer.
type ModelResponse struct {
	// Text is the answer: for Consolidate, the JSON object of edits.
	Text string
	// Model is the model's id as the provider reports it (such as
	// "claude-sonnet-4-5"); "" means unknown. Consolidate records it with
	// every change it makes.
	Model string
	// Usage is the request's token usage; zero when the model does not
	// report it.
	Usage Usage
}

// Usage counts the tokens of one or more model requests.
type Usage struct {
	// InputTokens are the prompt's tokens.
	InputTokens int
	// OutputTokens are the answer's tokens.
	OutputTokens int
}

// add returns u plus v.
func (u Usage) add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// ModelFunc is a [Model] made of a function.
type ModelFunc func(ctx context.Context, req ModelRequest) (ModelResponse, error)

// Generate implements [Model].
func (f ModelFunc) Generate(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	return f(ctx, req)
}
