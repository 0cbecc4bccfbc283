// Package embedapi embeds text through hosted and local embedding APIs over
// plain HTTP (standard library and agentmem's core only): OpenAI's
// /v1/embeddings and the servers that speak it (Azure OpenAI, Voyage AI,
// vLLM, LM Studio, Ollama's /v1, llama.cpp …), Google's Gemini API (models/{model}:batchEmbedContents) and
// Ollama's native /api/embed.
//
// Each provider is a type with the method set of agentmem's embedder
// interface — Model() string and Embed(ctx, texts) ([][]float32, error) —
// and EmbedQuery for the query side of asymmetric models (see QueryEmbedder).
// Parse builds one from a spec such as "openai:text-embedding-3-small",
// "gemini:gemini-embedding-001", "ollama:nomic-embed-text" or
// "voyage:voyage-3.5", with keys from the usual environment variables.
// Importing the package registers the names openai, ollama, gemini and
// voyage with store.RegisterEmbedder, so a store URL's
// ?embedder=openai:text-embedding-3-small builds the same embedder.
//
// # Model ids
//
// Model returns "provider:model@dimensions" (for example
// "openai:text-embedding-3-small@1536"), or "provider:model" when neither the
// options nor the package know the model's dimensions. The id changes when
// the model or the dimensions change, so vectors stamped with it are never
// compared with vectors of another model.
//
// # Batching, timeouts and retries
//
// Embed splits its texts into requests of at most BatchSize texts (never more
// than the provider documents: 2,048 for OpenAI, 1,000 for Voyage, 100 for
// Gemini) and at most MaxBatchRunes runes in all, sends them one after the
// other and returns one vector per text, in the order of the texts. Each
// request has its own Timeout. A request answered 408, 429 (except
// insufficient_quota) or 5xx, timed out or cut by the network is tried again
// up to MaxRetries times, after an exponential backoff with jitter or the wait
// the server asked for (Retry-After, retry-after-ms, Gemini's RetryInfo),
// whichever is longer; a wait longer than a minute or past the context's
// deadline is not waited for. 400, 401, 403 and 404 are never retried.
//
// # Errors
//
// Failures are errors.Is-able sentinels whose text says what to fix:
// ErrUnauthorized (401, or a key Gemini calls invalid), ErrForbidden (403),
// ErrNotFound (404: model or URL), ErrBadRequest (other 4xx),
// ErrQuotaExceeded, ErrRateLimited (429 after the retries), ErrTimeout,
// ErrUnavailable (5xx or network after the retries) and ErrBadResponse (a
// reply that is not JSON, or holds the wrong number of vectors, or vectors of
// the wrong dimensions — never attached to the wrong text). Service errors
// are *APIError values (errors.As) with the status code, the provider's code
// and its message, with the API key removed. Invalid arguments are
// ErrNoModel, ErrNoAPIKey, ErrInvalidOption, ErrInvalidText, ErrNoContext and
// ErrNilEmbedder; Parse fails with ErrInvalidSpec. A cancelled or expired
// context is returned as ctx.Err(), unwrapped.
//
// # Consistency
//
// An embedder is safe for concurrent use. When the dimensions are not known
// beforehand the first answer fixes them: a later answer of other dimensions
// (the model was swapped on the server under the same name) is ErrBadResponse.
package embedapi
