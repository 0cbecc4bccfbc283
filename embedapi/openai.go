package embedapi

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Providers' documented limits and this package's defaults.
const (
	openAIBaseURL     = "https://api.openai.com/v1"
	voyageBaseURL     = "https://api.voyageai.com/v1"
	azureAPIVersion   = "2024-10-21"
	openAIMaxInputs   = 2048 // inputs per request
	voyageMaxInputs   = 1000
	openAIBatch       = 256
	openAIBatchRunes  = 100_000 // well under 300,000 tokens per request
	voyageBatch       = 128
	voyageBatchRunes  = 60_000 // under the 120K-token limit of the large models
	openAIDialect     = "openai"
	azureDialect      = "azure"
	voyageDialect     = "voyage"
	openAIKeyVariable = "OPENAI_API_KEY"
	azureKeyVariable  = "AZURE_OPENAI_API_KEY"
	voyageKeyVariable = "VOYAGE_API_KEY"
)

// knownDims are the default dimensions of models whose id can carry them
// without a first call.
var knownDims = map[string]int{
	"openai:text-embedding-3-small": 1536,
	"openai:text-embedding-3-large": 3072,
	"openai:text-embedding-ada-002": 1536,
	"voyage:voyage-3.5":             1024,
	"voyage:voyage-3.5-lite":        1024,
	"voyage:voyage-3-large":         1024,
	"voyage:voyage-code-3":          1024,
	"gemini:gemini-embedding-001":   3072,
	"gemini:text-embedding-004":     768,
}

// OpenAIOptions configure NewOpenAI and NewVoyage. The zero value (or nil)
// means the defaults.
type OpenAIOptions struct {
	// BaseURL is the API root that /embeddings is appended to; its query
	// is kept. Default: OPENAI_BASE_URL, else https://api.openai.com/v1
	// (NewVoyage: https://api.voyageai.com/v1). Examples:
	//   - a local server: http://localhost:8000/v1 (vLLM, LM Studio,
	//     Ollama's http://localhost:11434/v1);
	//   - Azure OpenAI, deployment form:
	//     https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT
	//     (api-version 2024-10-21 added unless given in the query), or
	//     the v1 form https://RESOURCE.openai.azure.com/openai/v1.
	BaseURL string
	// Dialect is "openai", "azure" or "voyage"; default: "azure" for a
	// host under .openai.azure.com, .cognitiveservices.azure.com or
	// .services.ai.azure.com, "voyage" for api.voyageai.com, else
	// "openai". Azure sends the key in the api-key header; Voyage sends
	// input_type ("document" from Embed, "query" from EmbedQuery) and
	// output_dimension instead of dimensions.
	Dialect string
	// APIKey is sent as a bearer token (Azure: the api-key header).
	// Default: OPENAI_API_KEY (Azure: AZURE_OPENAI_API_KEY, Voyage:
	// VOYAGE_API_KEY). Required for OpenAI's, Azure's and Voyage's own
	// hosts; optional for any other server.
	APIKey string
	// Dimensions shortens the vectors (text-embedding-3 models, Voyage's
	// output_dimension); 0 keeps the model's default.
	Dimensions int
	// HTTPClient sends the requests; default http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request; default 60s.
	Timeout time.Duration
	// BatchSize is the most texts per request: default 256 (Voyage 128),
	// at most 2,048 (Voyage 1,000).
	BatchSize int
	// MaxBatchRunes is the most runes per request (a request takes at least
	// one text): default 100,000 (Voyage 60,000), so a batch stays under
	// the per-request token limits.
	MaxBatchRunes int
	// MaxRetries is how many times a failed request is tried again (429,
	// 5xx, timeouts); default 3.
	MaxRetries int
	// NoRetry sends each request once, whatever MaxRetries says.
	NoRetry bool
}

// OpenAI embeds texts through POST {BaseURL}/embeddings, the API of OpenAI
// and of servers compatible with it (Azure OpenAI, Voyage AI, local ones).
type OpenAI engine

var _ QueryEmbedder = (*OpenAI)(nil)

// NewOpenAI returns an embedder for model (on Azure's deployment URLs, the
// deployment's model name; the URL picks the deployment). ctx is not kept;
// NewOpenAI does no I/O. Errors: ErrNoModel, ErrNoAPIKey, ErrInvalidOption.
func NewOpenAI(ctx context.Context, model string, opts *OpenAIOptions) (*OpenAI, error) {
	return newOpenAI(ctx, model, opts, "")
}

// NewVoyage returns an embedder for a Voyage AI model: NewOpenAI with the
// base URL https://api.voyageai.com/v1 and the "voyage" dialect unless
// opts says otherwise.
func NewVoyage(ctx context.Context, model string, opts *OpenAIOptions) (*OpenAI, error) {
	return newOpenAI(ctx, model, opts, voyageDialect)
}

func newOpenAI(ctx context.Context, model string, opts *OpenAIOptions, dialect string) (*OpenAI, error) {
	if ctx == nil {
		return nil, ErrNoContext
	}
	var o OpenAIOptions
	if opts != nil {
		o = *opts
	}
	if o.Dialect != "" {
		dialect = o.Dialect
	}
	raw := o.BaseURL
	if raw == "" && dialect == voyageDialect {
		raw = voyageBaseURL
	}
	if raw == "" {
		raw = os.Getenv("OPENAI_BASE_URL")
	}
	if raw == "" {
		raw = openAIBaseURL
	}
	base, err := parseBase(raw, "BaseURL")
	if err != nil {
		return nil, err
	}
	host := strings.ToLower(base.Hostname())
	if dialect == "" {
		switch {
		case strings.HasSuffix(host, ".openai.azure.com"), strings.HasSuffix(host, ".cognitiveservices.azure.com"), strings.HasSuffix(host, ".services.ai.azure.com"):
			dialect = azureDialect
		case host == "api.voyageai.com":
			dialect = voyageDialect
		default:
			dialect = openAIDialect
		}
	}
	keyVar, limit, defBatch, defRunes := openAIKeyVariable, openAIMaxInputs, openAIBatch, openAIBatchRunes
	switch dialect {
	case openAIDialect:
	case azureDialect:
		keyVar = azureKeyVariable
		if strings.Contains(base.Path, "/deployments/") && !base.Query().Has("api-version") {
			q := base.Query()
			q.Set("api-version", azureAPIVersion)
			base.RawQuery = q.Encode()
		}
	case voyageDialect:
		keyVar, limit, defBatch, defRunes = voyageKeyVariable, voyageMaxInputs, voyageBatch, voyageBatchRunes
	default:
		return nil, fmt.Errorf("%w: Dialect %q: use openai, azure or voyage", ErrInvalidOption, o.Dialect)
	}
	c, err := commonOptions(model, o.Dimensions, o.BatchSize, defBatch, limit, o.MaxBatchRunes, defRunes, retries(o.MaxRetries, o.NoRetry), o.Timeout, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	c.apiKey = o.APIKey
	if c.apiKey == "" {
		c.apiKey = os.Getenv(keyVar)
	}
	ownHost := host == "api.openai.com" || host == "api.voyageai.com" || dialect == azureDialect
	if c.apiKey == "" && ownHost {
		return nil, fmt.Errorf("%w: set %s or OpenAIOptions.APIKey", ErrNoAPIKey, keyVar)
	}
	provider := dialect
	if c.dims == 0 {
		c.dims = knownDims[provider+":"+model] // the id and the check; never sent
	}
	e := newEngine(provider, model, c, keyVar+" or OpenAIOptions.APIKey", endpoint(base, "/embeddings"))
	e.keyHeader, e.keyPrefix = "Authorization", "Bearer "
	if dialect == azureDialect {
		e.keyHeader, e.keyPrefix = "api-key", ""
	}
	dims := o.Dimensions
	e.batch = func(ctx context.Context, texts []string, query bool) ([][]float32, error) {
		return openAISend(ctx, e, model, dialect, texts, query, dims)
	}
	return (*OpenAI)(e), nil
}

type openAIRequest struct {
	Model           string   `json:"model"`
	Input           []string `json:"input"`
	EncodingFormat  string   `json:"encoding_format,omitempty"`
	Dimensions      int      `json:"dimensions,omitempty"`
	InputType       string   `json:"input_type,omitempty"`
	OutputDimension int      `json:"output_dimension,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// openAISend sends one batch of texts to e in dialect.
func openAISend(ctx context.Context, e *engine, model, dialect string, texts []string, query bool, dims int) ([][]float32, error) {
	req := openAIRequest{Model: model, Input: texts}
	if dialect == voyageDialect {
		req.InputType = "document"
		if query {
			req.InputType = "query"
		}
		req.OutputDimension = dims
	} else {
		req.EncodingFormat = "float"
		req.Dimensions = dims
	}
	var resp openAIResponse
	if err := e.post(ctx, req, &resp); err != nil {
		return nil, err
	}
	if len(resp.Data) != len(texts) {
		return nil, e.badResponse(fmt.Sprintf("%d vectors for %d texts", len(resp.Data), len(texts)))
	}
	out := make([][]float32, len(texts))
	for i, d := range resp.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(out) || out[at] != nil {
			return nil, e.badResponse(fmt.Sprintf("index %d out of range or repeated in %d vectors", at, len(texts)))
		}
		if d.Embedding == nil {
			return nil, e.badResponse(fmt.Sprintf("no embedding at index %d", at))
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// Model returns "openai:MODEL@DIMENSIONS" ("azure:…", "voyage:…"), without
// "@DIMENSIONS" when they are unknown (an unlisted model and no
// Dimensions option).
func (p *OpenAI) Model() string { return (*engine)(p).Model() }

// Embed returns one vector per text, in order, embedded as documents.
// Errors: see the package documentation.
func (p *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return (*engine)(p).Embed(ctx, texts)
}

// EmbedQuery returns the vector of a search query (Voyage: input_type
// "query"; other servers make no difference).
func (p *OpenAI) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return (*engine)(p).EmbedQuery(ctx, text)
}
