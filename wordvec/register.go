package wordvec

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// Name is the embedder name this package registers with
// store.RegisterEmbedder on import: a store URL with ?embedder=wordvec (or
// store.OpenEmbedder(ctx, "wordvec")) gets the embedder of New(ctx, nil),
// and "wordvec:uniform" that of WeightUniform. The embedder it registers
// parses the table on its first Embed, not when the store opens, so that
// a program which opens a store and never searches or writes (a command
// that lists files) does not pay for it.
const Name = "wordvec"

var _ search.Embedder = (*Embedder)(nil)

func init() {
	store.RegisterEmbedder(Name, func(ctx context.Context, model string) (search.Embedder, error) {
		var o Options
		suffix := ""
		switch model {
		case "", "sif":
		case "uniform":
			o.Weighting, suffix = WeightUniform, "+uniform"
		default:
			return nil, fmt.Errorf("%w: %w: %s has no model %q: write %s, or %s:uniform", store.ErrInvalidURL, ErrInvalidOptions, Name, model, Name, Name)
		}
		if len(tableData) < headerLen {
			return New(ctx, &o) // its error says the table is damaged
		}
		n := int(binary.LittleEndian.Uint32(tableData[12:]))
		return &lazy{model: modelID(n) + suffix, open: sync.OnceValues(func() (*Embedder, error) {
			return New(context.WithoutCancel(ctx), &o)
		})}, nil
	})
}

// lazy is New's embedder, made on the first Embed.
type lazy struct {
	model string
	open  func() (*Embedder, error)
}

// Model is the model id of the embedder New makes (the same string).
func (l *lazy) Model() string { return l.model }

// Embed embeds texts with New's embedder, making it first.
func (l *lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	e, err := l.open()
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}
