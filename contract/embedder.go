package contract

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"sync"
	"unicode"
)

// ErrEmbedderDown is what a [FakeEmbedder] returns while it is down.
var ErrEmbedderDown = errors.New("contract: the fake embedder is down")

// FakeEmbedder is a small deterministic embedder for the suite: a hashed
// bag of words in 64 dimensions, where the words of one group of
// Synonyms share a dimension, so that "automobile" finds "car" while no
// lexical ranking can. It counts its calls and the texts it embedded, and
// can be put down (every call fails). It is safe for concurrent use.
type FakeEmbedder struct {
	// ModelID is what Model returns ("fake-1" when empty).
	ModelID string

	mu    sync.Mutex
	down  bool
	calls int
	texts int
}

// Synonyms are the word groups FakeEmbedder maps to one dimension.
var Synonyms = [][]string{
	{"car", "automobile", "vehicle", "sedan", "drive", "driving"},
	{"cat", "kitten", "feline", "pet"},
	{"doctor", "physician", "clinic", "appointment"},
	{"allergy", "allergic", "peanuts", "epipen"},
	{"holiday", "vacation", "trip", "travel", "flight"},
}

const fakeDims = 64

// Model implements search.Embedder.
func (f *FakeEmbedder) Model() string {
	if f.ModelID == "" {
		return "fake-1"
	}
	return f.ModelID
}

// SetDown makes every later call fail (true) or succeed (false).
func (f *FakeEmbedder) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// Counts returns the calls made and the texts embedded so far.
func (f *FakeEmbedder) Counts() (calls, texts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.texts
}

// Embed implements search.Embedder.
func (f *FakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.calls++
	down := f.down
	if !down {
		f.texts += len(texts)
	}
	f.mu.Unlock()
	if down {
		return nil, ErrEmbedderDown
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fakeVector(t)
	}
	return out, nil
}

var synonymOf = func() map[string]string {
	m := map[string]string{}
	for _, g := range Synonyms {
		for _, w := range g {
			m[w] = g[0]
		}
	}
	return m
}()

// fakeVector is the hashed bag of words of t (synonyms folded), plus one
// so that no text is the zero vector.
func fakeVector(t string) []float32 {
	v := make([]float32, fakeDims)
	v[0] = 0.01
	for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if g, ok := synonymOf[w]; ok {
			w = g
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[1+h.Sum32()%(fakeDims-1)]++
	}
	return v
}
