package embedapi

import (
	"context"

	"github.com/agentmem/agentmem/core/store"
)

// providers are the embedder names this package registers with
// store.RegisterEmbedder on import, so that a store URL's
// ?embedder=PROVIDER:MODEL (or store.OpenEmbedder) builds the embedder as
// Parse does, keys and base URLs from the environment.
var providers = []string{"openai", "ollama", "gemini", "voyage"}

var _ store.QueryEmbedder = QueryEmbedder(nil)

func init() {
	for _, p := range providers {
		store.RegisterEmbedder(p, func(ctx context.Context, model string) (store.Embedder, error) {
			e, err := Parse(ctx, p+":"+model)
			if err != nil {
				return nil, err
			}
			return e, nil
		})
	}
}
