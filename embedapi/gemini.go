package embedapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

const (
	geminiBaseURL    = "https://generativelanguage.googleapis.com/v1beta"
	geminiMaxInputs  = 100 // "at most 100 requests can be in one batch"
	geminiBatchRunes = 100_000
	// Task types of the Gemini API used by default.
	taskDocument = "RETRIEVAL_DOCUMENT"
	taskQuery    = "RETRIEVAL_QUERY"
)

// GeminiOptions configure NewGemini. The zero value (or nil) means the
// defaults.
type GeminiOptions struct {
	// BaseURL is the API root; default
	// https://generativelanguage.googleapis.com/v1beta.
	BaseURL string
	// APIKey is sent in the x-goog-api-key header. Default: GOOGLE_API_KEY,
	// else GEMINI_API_KEY (Google's libraries give GOOGLE_API_KEY
	// precedence too). Required for Google's host.
	APIKey string
	// Dimensions is outputDimensionality (gemini-embedding-001: 768, 1,536
	// or 3,072, the default); 0 keeps the model's default. Google
	// normalises only the full-size vectors: compare shortened ones by
	// cosine.
	Dimensions int
	// DocumentTaskType is the taskType of Embed; default
	// RETRIEVAL_DOCUMENT.
	DocumentTaskType string
	// QueryTaskType is the taskType of EmbedQuery; default RETRIEVAL_QUERY.
	QueryTaskType string
	// HTTPClient sends the requests; default http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request; default 60s.
	Timeout time.Duration
	// BatchSize is the most texts per request: default and maximum 100.
	BatchSize int
	// MaxBatchRunes is the most runes per request (a request takes at least
	// one text); default 100,000.
	MaxBatchRunes int
	// MaxRetries is how many times a failed request is tried again (429,
	// 5xx, timeouts); default 3.
	MaxRetries int
	// NoRetry sends each request once, whatever MaxRetries says.
	NoRetry bool
}

// Gemini embeds texts through the Gemini API's
// POST {BaseURL}/models/{model}:batchEmbedContents.
type Gemini engine

var _ QueryEmbedder = (*Gemini)(nil)

// NewGemini returns an embedder for model ("gemini-embedding-001", with or
// without "models/"). ctx is not kept; NewGemini does no I/O. Errors:
// ErrNoModel, ErrNoAPIKey, ErrInvalidOption.
func NewGemini(ctx context.Context, model string, opts *GeminiOptions) (*Gemini, error) {
	if ctx == nil {
		return nil, ErrNoContext
	}
	var o GeminiOptions
	if opts != nil {
		o = *opts
	}
	model = strings.TrimPrefix(strings.TrimSpace(model), "models/")
	for _, r := range model {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return nil, fmt.Errorf("%w: Gemini model %q: use a name such as gemini-embedding-001", ErrInvalidOption, model)
		}
	}
	raw := o.BaseURL
	if raw == "" {
		raw = geminiBaseURL
	}
	base, err := parseBase(raw, "BaseURL")
	if err != nil {
		return nil, err
	}
	c, err := commonOptions(model, o.Dimensions, o.BatchSize, geminiMaxInputs, geminiMaxInputs, o.MaxBatchRunes, geminiBatchRunes, retries(o.MaxRetries, o.NoRetry), o.Timeout, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	c.apiKey = o.APIKey
	if c.apiKey == "" {
		c.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	if c.apiKey == "" {
		c.apiKey = os.Getenv("GEMINI_API_KEY")
	}
	if c.apiKey == "" && strings.EqualFold(base.Hostname(), "generativelanguage.googleapis.com") {
		return nil, fmt.Errorf("%w: set GOOGLE_API_KEY or GEMINI_API_KEY, or GeminiOptions.APIKey", ErrNoAPIKey)
	}
	g := geminiBatch{model: "models/" + model, docTask: cmp.Or(o.DocumentTaskType, taskDocument),
		queryTask: cmp.Or(o.QueryTaskType, taskQuery), dims: o.Dimensions}
	if c.dims == 0 {
		c.dims = knownDims["gemini:"+model]
	}
	e := newEngine("gemini", model, c, "GOOGLE_API_KEY, GEMINI_API_KEY or GeminiOptions.APIKey",
		endpoint(base, "/models/"+model+":batchEmbedContents"))
	e.keyHeader = "x-goog-api-key"
	e.batch = func(ctx context.Context, texts []string, query bool) ([][]float32, error) {
		return g.send(ctx, e, texts, query)
	}
	return (*Gemini)(e), nil
}

// geminiBatch is what a Gemini batch request says besides its texts.
type geminiBatch struct {
	model              string // "models/<model>"
	docTask, queryTask string
	dims               int // outputDimensionality; 0 omits it
}

type geminiPart struct {
	Text string `json:"text"`
}

type geminiContent struct {
	Parts []geminiPart `json:"parts"`
}

type geminiEmbedRequest struct {
	Model                string        `json:"model"`
	Content              geminiContent `json:"content"`
	TaskType             string        `json:"taskType,omitempty"`
	OutputDimensionality int           `json:"outputDimensionality,omitempty"`
}

type geminiBatchRequest struct {
	Requests []geminiEmbedRequest `json:"requests"`
}

type geminiBatchResponse struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
}

func (g geminiBatch) send(ctx context.Context, e *engine, texts []string, query bool) ([][]float32, error) {
	task := g.docTask
	if query {
		task = g.queryTask
	}
	req := geminiBatchRequest{Requests: make([]geminiEmbedRequest, len(texts))}
	for i, t := range texts {
		req.Requests[i] = geminiEmbedRequest{Model: g.model, Content: geminiContent{Parts: []geminiPart{{Text: t}}},
			TaskType: task, OutputDimensionality: g.dims}
	}
	var resp geminiBatchResponse
	if err := e.post(ctx, req, &resp); err != nil {
		return nil, err
	}
	out := make([][]float32, len(resp.Embeddings))
	for i, e := range resp.Embeddings {
		out[i] = e.Values
	}
	return out, nil
}

// Model returns "gemini:MODEL@DIMENSIONS", without "@DIMENSIONS" when they
// are unknown.
func (p *Gemini) Model() string { return (*engine)(p).Model() }

// Embed returns one vector per text, in order, embedded with the
// document task type. Errors: see the package documentation.
func (p *Gemini) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return (*engine)(p).Embed(ctx, texts)
}

// EmbedQuery returns the vector of a search query, embedded with the query
// task type.
func (p *Gemini) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return (*engine)(p).EmbedQuery(ctx, text)
}
