package contract

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
)

// The corpus of the nearest-neighbour benchmarks (sqlite's and
// firestore's BenchmarkNN, docs/search.md): one scope of NNFiles files of
// NNSections chunks each, words drawn from a vocabulary of NNVocab, the
// top NNK chunks for NNQuery.
const (
	NNFiles    = 1000
	NNSections = 10
	NNVocab    = 3000
	NNQuery    = "w17 w230 w1999 w42 w808 w2500 w7 w1234"
	NNK        = 10
)

// NNFile returns file i of the corpus: NNSections headed sections of
// words words each (40 keeps repeated searches warm, 110 does not).
func NNFile(i, words int) string {
	r := rand.New(rand.NewPCG(uint64(i), 28))
	var sb strings.Builder
	for j := range NNSections {
		fmt.Fprintf(&sb, "## Part %d\n\n", j)
		for k := range words {
			if k > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "w%d", r.IntN(NNVocab))
		}
		sb.WriteString(".\n\n")
	}
	return sb.String()
}

// NNEmbedder is feature hashing of words into 100 signed dimensions: a
// deterministic search.Embedder for the nearest-neighbour benchmarks.
type NNEmbedder struct{}

// Model returns "nn-hash-100".
func (NNEmbedder) Model() string { return "nn-hash-100" }

// Embed returns one hashed vector per text.
func (NNEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 100)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			x := h.Sum32()
			if x&1 == 0 {
				v[(x>>1)%100]++
			} else {
				v[(x>>1)%100]--
			}
		}
		out[i] = v
	}
	return out, nil
}

// NNChunk is one chunk's vector as the store's index row holds it.
type NNChunk struct {
	// Path is the file's store path ("u/main/NAME").
	Path string
	// Hash is the chunk's hash.
	Hash string
	// Vec is the chunk's vector, unit length.
	Vec []float32
}

// DecodeNNChunks reads the chunks of index rows (the store's record
// format 1: chunks of hash "h", int8 vector "q" in base64, scale "k") of
// files under "u/main/".
func DecodeNNChunks(tb testing.TB, rows []driver.ScopeFile) []NNChunk {
	var out []NNChunk
	for _, f := range rows {
		var rec struct {
			Dims   int `json:"dims"`
			Chunks []struct {
				H string  `json:"h"`
				K float32 `json:"k"`
				Q string  `json:"q"`
			} `json:"chunks"`
		}
		if err := json.Unmarshal([]byte(f.Content), &rec); err != nil {
			tb.Fatal(err)
		}
		name := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
		for _, c := range rec.Chunks {
			q, err := base64.StdEncoding.DecodeString(c.Q)
			if err != nil || len(q) != rec.Dims {
				tb.Fatalf("index row %s: bad chunk vector", f.Path)
			}
			v := make([]float32, len(q))
			for i, x := range q {
				v[i] = float32(int8(x)) * c.K
			}
			out = append(out, NNChunk{Path: "u/main/" + name, Hash: c.H, Vec: NNUnit(v)})
		}
	}
	return out
}

// NNUnit scales v to unit length in place and returns it.
func NNUnit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// NNExact returns the set of "path#hash" of the k chunks nearest to q
// (by dot product; the vectors are unit length).
func NNExact(chunks []NNChunk, q []float32, k int) map[string]bool {
	type hit struct {
		id  string
		dot float64
	}
	hits := make([]hit, len(chunks))
	for i, c := range chunks {
		dot := 0.0
		for d := range q {
			dot += float64(q[d]) * float64(c.Vec[d])
		}
		hits[i] = hit{c.Path + "#" + c.Hash, dot}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.dot, a.dot) })
	out := map[string]bool{}
	for _, h := range hits[:min(k, len(hits))] {
		out[h.id] = true
	}
	return out
}
