package embedapi

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const (
	ollamaBaseURL    = "http://127.0.0.1:11434"
	ollamaBatch      = 32
	ollamaBatchRunes = 100_000
)

// OllamaOptions configure NewOllama. The zero value (or nil) means the
// defaults.
type OllamaOptions struct {
	// BaseURL is the server; default OLLAMA_HOST (as Ollama reads it:
	// "host", "host:port" or a URL; port 11434 when none), else
	// http://127.0.0.1:11434.
	BaseURL string
	// APIKey, when set, is sent as a bearer token (a proxy, Ollama's
	// hosted API); default OLLAMA_API_KEY. A local server needs none.
	APIKey string
	// Dimensions is the request's dimensions (models that can shorten
	// their vectors); 0 keeps the model's.
	Dimensions int
	// HTTPClient sends the requests; default http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request (a model that is not loaded yet takes
	// a while on the first); default 60s.
	Timeout time.Duration
	// BatchSize is the most texts per request; default 32.
	BatchSize int
	// MaxBatchRunes is the most runes per request (a request takes at least
	// one text); default 100,000.
	MaxBatchRunes int
	// MaxRetries is how many times a failed request is tried again (429,
	// 5xx, timeouts, connection refused); default 3.
	MaxRetries int
	// NoRetry sends each request once, whatever MaxRetries says.
	NoRetry bool
}

// Ollama embeds texts through Ollama's POST {BaseURL}/api/embed.
type Ollama engine

var _ QueryEmbedder = (*Ollama)(nil)

// NewOllama returns an embedder for model ("nomic-embed-text",
// "embeddinggemma", "qwen3-embedding:0.6b" …). ctx is not kept; NewOllama
// does no I/O. Errors: ErrNoModel, ErrInvalidOption.
func NewOllama(ctx context.Context, model string, opts *OllamaOptions) (*Ollama, error) {
	if ctx == nil {
		return nil, ErrNoContext
	}
	var o OllamaOptions
	if opts != nil {
		o = *opts
	}
	raw := o.BaseURL
	if raw == "" {
		raw = ollamaHost(os.Getenv("OLLAMA_HOST"))
	}
	base, err := parseBase(raw, "BaseURL")
	if err != nil {
		return nil, err
	}
	c, err := commonOptions(model, o.Dimensions, o.BatchSize, ollamaBatch, 0, o.MaxBatchRunes, ollamaBatchRunes, retries(o.MaxRetries, o.NoRetry), o.Timeout, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	c.apiKey = o.APIKey
	if c.apiKey == "" {
		c.apiKey = os.Getenv("OLLAMA_API_KEY")
	}
	e := newEngine("ollama", model, c, "OLLAMA_API_KEY or OllamaOptions.APIKey", endpoint(base, "/api/embed"))
	e.keyHeader, e.keyPrefix = "Authorization", "Bearer "
	dims := o.Dimensions
	e.batch = func(ctx context.Context, texts []string, _ bool) ([][]float32, error) {
		var resp ollamaResponse
		if err := e.post(ctx, ollamaRequest{Model: model, Input: texts, Dimensions: dims}, &resp); err != nil {
			return nil, err
		}
		return resp.Embeddings, nil
	}
	return (*Ollama)(e), nil
}

// ollamaHost turns OLLAMA_HOST into a base URL.
func ollamaHost(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ollamaBaseURL
	}
	if strings.Contains(v, "://") {
		return v
	}
	host, rest, _ := strings.Cut(v, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "11434")
	}
	v = host
	if rest != "" {
		v += "/" + rest
	}
	return "http://" + v
}

type ollamaRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type ollamaResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

// Model returns "ollama:MODEL", or "ollama:MODEL@DIMENSIONS" with the
// Dimensions option.
func (p *Ollama) Model() string { return (*engine)(p).Model() }

// Embed returns one vector per text, in order. Errors: see the package
// documentation.
func (p *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return (*engine)(p).Embed(ctx, texts)
}

// EmbedQuery returns the vector of a search query; Ollama's API makes no
// difference between queries and documents.
func (p *Ollama) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return (*engine)(p).EmbedQuery(ctx, text)
}
