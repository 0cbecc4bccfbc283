package wordvec

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/store"
)

// Name is the embedder name this package registers with
// store.RegisterEmbedder on import: a store URL with ?embedder=wordvec (or
// store.OpenEmbedder(ctx, "wordvec")) gets New(ctx, nil), and
// "wordvec:uniform" the uniform weighting.
const Name = "wordvec"

var _ store.Embedder = (*Embedder)(nil)

func init() {
	store.RegisterEmbedder(Name, func(ctx context.Context, model string) (store.Embedder, error) {
		var o Options
		switch model {
		case "", "sif":
		case "uniform":
			o.Weighting = WeightUniform
		default:
			return nil, fmt.Errorf("%w: %w: %s has no model %q: write %s, or %s:uniform", store.ErrInvalidURL, ErrInvalidOptions, Name, model, Name, Name)
		}
		return New(ctx, &o)
	})
}
