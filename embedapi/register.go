package embedapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// providers are the embedder names this package registers with
// store.RegisterEmbedder on import, so that a store URL's
// ?embedder=PROVIDER:MODEL (or store.OpenEmbedder) builds the embedder as
// Parse does, keys and base URLs from the environment. A malformed model
// (ErrInvalidSpec, ErrNoModel, ErrInvalidOption) also wraps
// store.ErrInvalidURL; a missing key is ErrNoAPIKey.
var providers = []string{"openai", "ollama", "gemini", "voyage"}

func init() {
	for _, p := range providers {
		store.RegisterEmbedder(p, func(ctx context.Context, model string) (search.Embedder, error) {
			e, err := Parse(ctx, p+":"+model)
			if errors.Is(err, ErrInvalidSpec) || errors.Is(err, ErrNoModel) || errors.Is(err, ErrInvalidOption) {
				return nil, fmt.Errorf("%w: %w", store.ErrInvalidURL, err)
			}
			if err != nil {
				return nil, err
			}
			return e, nil
		})
	}
}
