package embedapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/search"
)

// Embedder is core's search.Embedder: a batch of texts in, one vector per
// text out, in order, with Model naming the model and its dimensions
// ("openai:text-embedding-3-small@1536"). Embed embeds texts as documents
// (the side that is stored and searched).
type Embedder = search.Embedder

// QueryEmbedder is core's search.QueryEmbedder, implemented by every
// provider here: EmbedQuery embeds a search query, which some models embed
// differently from the documents it is matched against (Gemini's
// RETRIEVAL_QUERY task type, Voyage's input_type "query"); the store uses it
// for a search's query when the embedder has it.
type QueryEmbedder = search.QueryEmbedder

// Errors. Each is checked with errors.Is; service failures are *APIError
// values wrapping one of them.
var (
	// ErrNoModel: the model name is empty.
	ErrNoModel = errors.New("embedapi: model missing: pass the embedding model's name")
	// ErrNoAPIKey: the provider needs a key and none was given or found in
	// its environment variable.
	ErrNoAPIKey = errors.New("embedapi: API key missing: set the provider's environment variable or the APIKey option")
	// ErrInvalidOption: an option is out of range or malformed.
	ErrInvalidOption = errors.New("embedapi: invalid option")
	// ErrInvalidSpec: Parse was given something other than PROVIDER:MODEL
	// with a known provider.
	ErrInvalidSpec = errors.New("embedapi: invalid embedder spec: use openai:MODEL, gemini:MODEL, ollama:MODEL or voyage:MODEL, optionally @DIMENSIONS")
	// ErrInvalidText: a text is empty or not valid UTF-8.
	ErrInvalidText = errors.New("embedapi: invalid text: drop empty texts and pass valid UTF-8")
	// ErrNoContext: a nil context.Context was passed.
	ErrNoContext = errors.New("embedapi: context missing: pass a context.Context")
	// ErrNilEmbedder: a method was called on a nil embedder.
	ErrNilEmbedder = errors.New("embedapi: embedder is nil: build it with New… or Parse")

	// ErrUnauthorized: the service refused the API key (HTTP 401, or
	// Gemini's API_KEY_INVALID).
	ErrUnauthorized = errors.New("embedapi: API key refused: check the key")
	// ErrForbidden: the key may not use this model or endpoint (HTTP 403).
	ErrForbidden = errors.New("embedapi: access denied: check the key's permissions for this model")
	// ErrNotFound: the model or the URL does not exist (HTTP 404).
	ErrNotFound = errors.New("embedapi: model or endpoint not found: check the model name and the base URL")
	// ErrBadRequest: the service refused the request (HTTP 400 and other
	// 4xx): too many or too long texts, or an option the model lacks.
	ErrBadRequest = errors.New("embedapi: request refused: check the model's limits and options (Dimensions, BatchSize, MaxBatchRunes)")
	// ErrQuotaExceeded: the account has no quota left (OpenAI's
	// insufficient_quota); not retried.
	ErrQuotaExceeded = errors.New("embedapi: quota exhausted: check the account's plan and billing")
	// ErrRateLimited: HTTP 429 on every attempt, or a wait longer than
	// allowed.
	ErrRateLimited = errors.New("embedapi: rate limited: send fewer requests or raise MaxRetries")
	// ErrTimeout: every attempt took longer than Timeout.
	ErrTimeout = errors.New("embedapi: request timed out: raise Timeout or lower BatchSize")
	// ErrUnavailable: HTTP 5xx or a network failure on every attempt.
	ErrUnavailable = errors.New("embedapi: service unavailable: check that the server runs and BaseURL points at it")
	// ErrBadResponse: the reply is not the documented JSON, or holds the
	// wrong number of vectors or vectors of the wrong dimensions.
	ErrBadResponse = errors.New("embedapi: unusable response: check that BaseURL is the provider's API and Dimensions matches the model")
)

// APIError is a failure reported by (or on the way to) an embedding
// service. It wraps one of the sentinels above (errors.Is).
type APIError struct {
	// Provider is "openai", "azure", "voyage", "gemini" or "ollama".
	Provider string
	// StatusCode is the HTTP status, 0 when no answer came.
	StatusCode int
	// Code is the provider's error code or status, e.g.
	// "insufficient_quota" or "RESOURCE_EXHAUSTED", when it sent one.
	Code string
	// Message is the provider's message (shortened, the API key removed),
	// or what went wrong on the way.
	Message string
	// RetryAfter is the wait the service asked for, 0 when none.
	RetryAfter time.Duration
	// Attempts is how many requests were sent.
	Attempts int

	kind error
	hint string
}

// Error says what to fix first, then what the service said.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.kind.Error())
	if e.hint != "" {
		b.WriteString(" (" + e.hint + ")")
	}
	b.WriteString(": " + e.Provider)
	if e.StatusCode != 0 {
		b.WriteString(" answered HTTP " + strconv.Itoa(e.StatusCode))
	}
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *APIError) Unwrap() error { return e.kind }

// Parse builds an embedder from a spec "PROVIDER:MODEL" or
// "PROVIDER:MODEL@DIMENSIONS", with every other setting at its default (keys
// and base URLs from the environment, see NewOpenAI, NewVoyage, NewGemini and
// NewOllama):
//
//	openai:text-embedding-3-small      OPENAI_API_KEY, OPENAI_BASE_URL
//	openai:text-embedding-3-large@1024 shortened to 1,024 dimensions
//	voyage:voyage-3.5                  VOYAGE_API_KEY
//	gemini:gemini-embedding-001@768    GOOGLE_API_KEY or GEMINI_API_KEY
//	ollama:nomic-embed-text            OLLAMA_HOST, no key
//
// The model is everything after the first colon (Ollama's tags keep theirs:
// "ollama:nomic-embed-text:v1.5"). The value returned is also a
// QueryEmbedder. Errors: ErrInvalidSpec, or those of the constructor.
func Parse(ctx context.Context, spec string) (QueryEmbedder, error) {
	provider, model, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok || model == "" {
		return nil, fmt.Errorf("%w: got %q", ErrInvalidSpec, spec)
	}
	dims := 0
	if at := strings.LastIndexByte(model, '@'); at >= 0 {
		n, err := strconv.Atoi(model[at+1:])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: dimensions %q in %q are not a positive number", ErrInvalidSpec, model[at+1:], spec)
		}
		dims, model = n, model[:at]
		if model == "" {
			return nil, fmt.Errorf("%w: got %q", ErrInvalidSpec, spec)
		}
	}
	switch strings.ToLower(provider) {
	case "openai":
		return NewOpenAI(ctx, model, &OpenAIOptions{Dimensions: dims})
	case "voyage":
		return NewVoyage(ctx, model, &OpenAIOptions{Dimensions: dims})
	case "gemini":
		return NewGemini(ctx, model, &GeminiOptions{Dimensions: dims})
	case "ollama":
		return NewOllama(ctx, model, &OllamaOptions{Dimensions: dims})
	}
	return nil, fmt.Errorf("%w: unknown provider %q", ErrInvalidSpec, provider)
}
