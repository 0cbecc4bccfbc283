package genkit

import (
	"context"
	"fmt"
	"github.com/agentmem/agentmem/core/memory/pruned"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/agentmem/agentmem/core/store"
)

// Model turns a Genkit model into the model behind
// pruned.Consolidate: one genkit.Generate call on g with a system
// and a user message (never compiled as templates), the answer's text,
// the usage from its GenerationUsage and the model's registry name as its
// id. A nil g or m is an error on use (store.ErrNilArgument).
func Model(g *genkit.Genkit, m ai.Model) pruned.Model { return genkitModel{g, m} }

type genkitModel struct {
	g *genkit.Genkit
	m ai.Model
}

func (gm genkitModel) Generate(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
	if gm.g == nil || gm.m == nil {
		return pruned.ModelResponse{}, fmt.Errorf("genkit: pass Model a Genkit (genkit.Init) and a model, not nil: %w", store.ErrNilArgument)
	}
	opts := []ai.GenerateOption{ai.WithModel(gm.m),
		ai.WithMessages(ai.NewSystemTextMessage(req.System), ai.NewUserTextMessage(req.User))}
	if req.MaxOutputTokens > 0 {
		opts = append(opts, ai.WithConfig(&ai.GenerationCommonConfig{MaxOutputTokens: req.MaxOutputTokens}))
	}
	resp, err := genkit.Generate(ctx, gm.g, opts...)
	if err != nil {
		return pruned.ModelResponse{}, err
	}
	out := pruned.ModelResponse{Text: resp.Text(), Model: gm.m.Name()}
	if u := resp.Usage; u != nil {
		out.Usage = pruned.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
	return out, nil
}
