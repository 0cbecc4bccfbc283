package wordvec

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Dimensions is the length of every vector Embed returns.
const Dimensions = dims

// Weighting says how a text's words are weighted in its average.
type Weighting int

const (
	// WeightSIF weights a word w by a/(a+p(w)), where p(w) is its frequency
	// estimated from its rank in GloVe's vocabulary (Zipf's law) and
	// a = 0.001: "smooth inverse frequency" (Arora, Liang and Ma, 2017).
	// Frequent words ("the", "what", "did") count little. The default.
	WeightSIF Weighting = iota
	// WeightUniform averages the words' vectors with equal weights.
	WeightUniform
)

// Options configure an Embedder. A nil *Options means the defaults.
type Options struct {
	// Weighting chooses how words are weighted; the zero value is WeightSIF.
	// It is part of Model: vectors made with different weightings are not
	// comparable.
	Weighting Weighting
}

var (
	// ErrInvalidOptions is returned by New for options it does not know.
	ErrInvalidOptions = errors.New("wordvec: invalid options")
	// ErrNilContext is returned by New and Embed when ctx is nil.
	ErrNilContext = errors.New("wordvec: pass a context.Context, not nil")
)

// Embedder turns texts into averaged word vectors. It is safe for concurrent
// use; the table is shared by all Embedders of a process.
type Embedder struct {
	t     *table
	model string
	sif   bool
}

// sifA is SIF's smoothing parameter a; harmonic approximates the normalizing
// constant of Zipf's law over GloVe 6B's 400,000-word vocabulary (ln V + γ).
const (
	sifA     = 1e-3
	harmonic = 13.4786
)

// New returns an Embedder over the embedded table, parsing it on first use
// in the process (milliseconds; see BenchmarkLoad). ctx is not used
// for I/O (there is none); a done ctx fails New with ctx's error.
func New(ctx context.Context, opts *Options) (*Embedder, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	suffix := ""
	switch o.Weighting {
	case WeightSIF:
	case WeightUniform:
		suffix = "+uniform"
	default:
		return nil, fmt.Errorf("%w: Weighting %d is neither WeightSIF nor WeightUniform", ErrInvalidOptions, o.Weighting)
	}
	t, err := loadTable()
	if err != nil {
		return nil, err
	}
	return &Embedder{t: t, sif: o.Weighting == WeightSIF, model: modelID(t.n) + suffix}, nil
}

func modelID(words int) string {
	return fmt.Sprintf("wordvec/glove-6b-100d-%dk-int8@%d", words/1000, formatVersion)
}

// Model names the table and the weighting, for example
// "wordvec/glove-6b-100d-100k-int8@1"; it changes whenever the vectors
// Embed returns for the same text would.
func (e *Embedder) Model() string { return e.model }

// Dimensions returns the length of the vectors, Dimensions.
func (e *Embedder) Dimensions() int { return dims }

// Embed returns one vector per text, in order: the weighted average of the
// vectors of the text's words, scaled to unit length, so that the dot
// product of two vectors is their cosine similarity. Words are runs of
// letters and digits, lower-cased, with accents removed from Latin letters;
// a word missing from the table is looked up without a plural, -ing or -ed
// ending, and skipped if still missing (numbers, most names, other scripts).
//
// A text with no known word (empty, punctuation, numbers only) gets the zero
// vector, which is similar to nothing: callers ranking by cosine should give
// it no semantic score. Embed checks ctx between texts and returns ctx's
// error, and no vectors, once it is done.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*dims)
	var buf, scratch []byte
	for i, text := range texts {
		if i > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := flat[i*dims : (i+1)*dims : (i+1)*dims]
		buf, scratch = e.embed(text, v, buf, scratch)
		out[i] = v
	}
	return out, nil
}

func (e *Embedder) embed(text string, v []float32, buf, scratch []byte) ([]byte, []byte) {
	t := e.t
	acc := (*[dims]float32)(v)
	buf = tokens(text, buf, func(word []byte) {
		i := t.lookup(word, &scratch)
		if i < 0 {
			return
		}
		w := t.scale(i)
		if e.sif {
			p := 1 / (float64(i+1) * harmonic)
			w *= float32(sifA / (sifA + p))
		}
		q := (*[dims]byte)(t.vector(i))
		for k := range acc {
			// The conversion keeps the product from being fused into the
			// sum, so results are the same on every architecture.
			acc[k] += float32(w * float32(int8(q[k])))
		}
	})
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for k := range v {
			v[k] *= inv
		}
	}
	return buf, scratch
}
