// The search index's rows: the vectors of a file's chunks, kept in a reserved
// segment of its folder, and the Embedder interfaces that make them.

package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/rowpath"
)

// Embedder turns texts into vectors for hybrid search ([Hybrid]).
// Embed is given the chunks of memory files (documents); it must return
// one vector per text, in order, all of one length. Model names the model
// and anything else that changes the vectors (dimensions, a prefix): a
// vector stored under another model id is never scored. It must be safe for
// concurrent use. The wordvec module has an offline one; embedapi has
// OpenAI-compatible, Gemini and Ollama ones.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// QueryEmbedder is an [Embedder] whose queries are embedded differently
// from documents (a task type, an input type, a prefix). Search embeds the
// query with EmbedQuery when the embedder has it, with Embed otherwise.
type QueryEmbedder interface {
	Embedder
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// QueryExpander is an [Embedder] that also knows words related to a
// query's words (its model's nearest neighbours, say). A hybrid search
// adds them to its BM25 ranking, each counting for a fraction of a query
// word, so that a note found by neither its words nor its vector alone
// ("spouse" for a note about a partner) can still rank, beside the
// related words every BM25 ranking adds (see [BM25]). An error or
// no words leaves the ranking as it is. BM25 and literal searches never
// ask the expander.
type QueryExpander interface {
	Embedder
	ExpandQuery(ctx context.Context, query string) ([]string, error)
}

// IndexSegment is the folder, inside each folder that holds memory files,
// where the store keeps the search index of those files: the record of
// "kamal/notes/a.md" is "kamal/notes/.agentmem-index/a.md" (a long record
// continues in ".agentmem-index-2/a.md", ".agentmem-index-3/a.md", …). The
// name starts with [rowpath.Reserved], so no user path can name it,
// and it lies under the file's own folder, so reading one scope's index
// reads that scope's rows only (the same partition on Cosmos DB and
// DynamoDB). These rows are derived data written through the driver's
// primitives: never listed, walked, searched or recorded in history as
// files, erased with their file and by store.Store.ForgetIndex.
const IndexSegment = ".agentmem-index"

// maxRecordChars bounds one index row's JSON, in bytes (it is ASCII): well
// under DynamoDB's 400 KB item limit with the row's keys and attributes.
const maxRecordChars = 300_000

// indexPath returns the path of part (1-based) of the index record of the
// file at p.
func indexPath(p string, part int) string {
	dir, name := path.Split(p)
	seg := IndexSegment
	if part > 1 {
		seg += "-" + strconv.Itoa(part)
	}
	return dir + seg + "/" + name
}

// indexFolder is the folder of the first parts of the records of the files
// directly in folder dir ("" or ending in "/").
func indexFolder(dir string) string { return dir + IndexSegment + "/" }

// isIndexRow reports whether p is the path of an index record part:
// [folder/]IndexSegment[-N]/name, with folder a valid path and N >= 2.
func isIndexRow(p string) bool {
	segs := strings.Split(p, "/")
	if len(segs) < 2 {
		return false
	}
	seg, name := segs[len(segs)-2], segs[len(segs)-1]
	if n, ok := strings.CutPrefix(seg, IndexSegment); !ok {
		return false
	} else if n != "" {
		k, err := strconv.Atoi(strings.TrimPrefix(n, "-"))
		if !strings.HasPrefix(n, "-") || err != nil || k < 2 || strconv.Itoa(k) != n[1:] {
			return false
		}
	}
	if !rowpath.Valid(name) {
		return false
	}
	parent := strings.Join(segs[:len(segs)-2], "/")
	return parent == "" || rowpath.Valid(parent)
}

// IsIndexPath reports whether p names a row of the store's search index
// (see [IndexSegment] and [TermSegment]): drivers that filter the paths they list (a file
// system) use it to list and read these rows like any other.
func IsIndexPath(p string) bool { return isIndexRow(p) || isTermRow(p) }

// record is one part of a file's index record.
type record struct {
	// Format is the record format, 1.
	Format int `json:"format"`
	// File is the version of the file the record was made from.
	File string `json:"file"`
	// Model is the embedder's model id.
	Model string `json:"model"`
	// Dims is the length of every vector (0 when every chunk is a known
	// zero vector).
	Dims int `json:"dims"`
	// Parts is the number of parts (on the first part only).
	Parts int `json:"parts,omitempty"`
	// Chunks are the chunks' vectors.
	Chunks []recChunk `json:"chunks"`
}

// recChunk is one chunk's vector: its hash, rune span, and its vector
// quantized to int8 (Q, base64) with a scale. A chunk whose vector is zero
// (no word the model knows) has an empty Q and a zero scale: known, so not
// embedded again, and never scored.
type recChunk struct {
	Hash  string  `json:"h"`
	Start int     `json:"s"`
	End   int     `json:"e"`
	Scale float32 `json:"k"`
	Q     string  `json:"q"`
}

// quantize encodes v as int8 with a scale (max |x| / 127).
func quantize(v []float32) (float32, string) {
	m := float32(0)
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	b := make([]byte, len(v))
	scale := m / 127
	if scale > 0 {
		for i, x := range v {
			b[i] = byte(int8(math.Round(float64(x / scale))))
		}
	}
	return scale, base64.StdEncoding.EncodeToString(b)
}

// zeroVec is the vector of a chunk known to embed to zero: present in an
// [indexed] map and in hints (so the chunk is not embedded again), never
// scored (its length matches no query's).
var zeroVec = []float32{}

// zero reports whether c records a known zero vector.
func (c recChunk) zero() bool { return c.Q == "" && c.Scale == 0 }

// vector decodes a chunk's vector, normalised to unit length, or nil
// when it is malformed or not dims long.
func (c recChunk) vector(dims int) []float32 {
	b, err := base64.StdEncoding.DecodeString(c.Q)
	if err != nil || len(b) != dims || c.Scale < 0 || math.IsNaN(float64(c.Scale)) {
		return nil
	}
	v := make([]float32, dims)
	for i, x := range b {
		v[i] = float32(int8(x)) * c.Scale
	}
	return normalize(v)
}

// normalize scales v to unit length in place and returns it (nil for a zero
// or non-finite vector).
func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// decodeRecord parses one part; a malformed part is nil (it is derived
// data: the indexer replaces it).
func decodeRecord(content string) *record {
	var r record
	if err := json.Unmarshal([]byte(content), &r); err != nil || r.Format != 1 || r.Dims < 0 {
		return nil
	}
	if r.Dims == 0 {
		// Only a record of known zero vectors has no length.
		if len(r.Chunks) == 0 {
			return nil
		}
		for _, c := range r.Chunks {
			if !c.zero() {
				return nil
			}
		}
	}
	return &r
}

// encodeRecord splits rec's chunks into parts of at most maxRecordChars
// bytes each and returns their JSON, the first part carrying the count.
func encodeRecord(rec record) ([]string, error) {
	var parts [][]recChunk
	var cur []recChunk
	size := 200 + len(rec.File) + len(rec.Model)
	budget := size
	for _, c := range rec.Chunks {
		n := len(c.Hash) + len(c.Q) + 64
		if len(cur) > 0 && budget+n > maxRecordChars {
			parts, cur, budget = append(parts, cur), nil, size
		}
		cur = append(cur, c)
		budget += n
	}
	parts = append(parts, cur)
	out := make([]string, len(parts))
	for i, cs := range parts {
		r := record{Format: 1, File: rec.File, Model: rec.Model, Dims: rec.Dims, Chunks: cs}
		if i == 0 {
			r.Parts = len(parts)
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if len(b) > maxRecordChars {
			return nil, fmt.Errorf("search: index record of %d bytes: %w", len(b), driver.ErrTooLarge)
		}
		out[i] = string(b)
	}
	return out, nil
}

// errEmbedder wraps an embedder's failure or malformed answer.
var errEmbedder = errors.New("search: embedder failed")

// embedChecked calls e.Embed and checks the answer: one finite, non-zero
// vector per text, all of one length. Vectors come back normalised.
func embedChecked(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errEmbedder, err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", errEmbedder, len(vs), len(texts))
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if len(v) == 0 || len(v) != len(vs[0]) {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions", errEmbedder, i, len(v))
		}
		out[i] = normalize(append([]float32(nil), v...)) // nil for a zero vector: never scored
	}
	return out, nil
}

// embedQuery embeds a search query, with EmbedQuery when e has it.
func embedQuery(ctx context.Context, e Embedder, q string) ([]float32, error) {
	if qe, ok := e.(QueryEmbedder); ok {
		v, err := qe.EmbedQuery(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errEmbedder, err)
		}
		return normalize(append([]float32(nil), v...)), nil
	}
	vs, err := embedChecked(ctx, e, []string{q})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}
