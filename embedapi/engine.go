package embedapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Defaults shared by every provider.
const (
	defaultTimeout    = 60 * time.Second
	defaultMaxRetries = 3
	// backoffBase and backoffMax bound the exponential backoff; maxWait is
	// the longest Retry-After waited for.
	backoffBase = 500 * time.Millisecond
	backoffMax  = 20 * time.Second
	maxWait     = time.Minute
	// maxResponseBytes bounds a reply read into memory (2,048 vectors of
	// 3,072 floats as JSON stay below it); maxErrorBytes an error reply.
	maxResponseBytes = 256 << 20
	maxErrorBytes    = 64 << 10
	maxMessageRunes  = 300
)

// common holds the options every provider has, after validation.
type common struct {
	apiKey        string
	dims          int
	batchSize     int
	maxBatchRunes int
	maxRetries    int
	timeout       time.Duration
	hc            *http.Client
}

// commonOptions checks the shared options; limit is the provider's
// documented maximum of texts per request (0: none).
func commonOptions(model string, dims, batchSize, defBatch, limit, maxRunes, defRunes, maxRetries int, timeout time.Duration, hc *http.Client) (common, error) {
	c := common{dims: dims, batchSize: batchSize, maxBatchRunes: maxRunes, maxRetries: maxRetries, timeout: timeout, hc: hc}
	if strings.TrimSpace(model) == "" {
		return c, ErrNoModel
	}
	switch {
	case dims < 0:
		return c, fmt.Errorf("%w: Dimensions %d is negative: leave it 0 for the model's default", ErrInvalidOption, dims)
	case batchSize < 0:
		return c, fmt.Errorf("%w: BatchSize %d is negative: leave it 0 for %d", ErrInvalidOption, batchSize, defBatch)
	case limit > 0 && batchSize > limit:
		return c, fmt.Errorf("%w: BatchSize %d is over the provider's limit of %d texts per request", ErrInvalidOption, batchSize, limit)
	case maxRunes < 0:
		return c, fmt.Errorf("%w: MaxBatchRunes %d is negative: leave it 0 for %d", ErrInvalidOption, maxRunes, defRunes)
	case maxRetries < 0:
		return c, fmt.Errorf("%w: MaxRetries %d is negative: use 0 for no retry", ErrInvalidOption, maxRetries)
	case timeout < 0:
		return c, fmt.Errorf("%w: Timeout %v is negative: leave it 0 for %v", ErrInvalidOption, timeout, defaultTimeout)
	}
	if c.batchSize == 0 {
		c.batchSize = defBatch
	}
	if c.maxBatchRunes == 0 {
		c.maxBatchRunes = defRunes
	}
	if c.timeout == 0 {
		c.timeout = defaultTimeout
	}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	return c, nil
}

// parseBase checks a base URL and drops a trailing slash from its path.
func parseBase(raw, option string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %s %q is not an http(s) URL", ErrInvalidOption, option, raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// endpoint is base with path appended to its path, its query kept.
func endpoint(base *url.URL, path string) string {
	u := *base
	u.Path += path
	return u.String()
}

// batchFunc sends one request for texts and returns their vectors in order
// (count checked by the caller).
type batchFunc func(ctx context.Context, texts []string, query bool) ([][]float32, error)

// engine is what every provider shares: batching, retries, validation,
// and the methods of the embedders ([OpenAI], [Gemini] and [Ollama] are
// engines, each with its own constructor and batch request).
type engine struct {
	provider string
	id       string
	common
	keyHint   string // where the key comes from, for ErrUnauthorized
	url       string // where each batch is posted
	keyHeader string // the header that carries the API key, when there is one
	keyPrefix string // before the key in it ("Bearer ")
	batch     batchFunc
	learned   atomic.Int64 // dimensions fixed by the first answer when dims == 0
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

func newEngine(provider, model string, c common, keyHint, url string) *engine {
	id := provider + ":" + model
	if c.dims > 0 {
		id += "@" + strconv.Itoa(c.dims)
	}
	return &engine{provider: provider, id: id, common: c, keyHint: keyHint, url: url, sleep: driver.Sleep}
}

// Model is the embedders' Model: the engine's id, "" for a nil one.
func (e *engine) Model() string {
	if e == nil {
		return ""
	}
	return e.id
}

// Embed is the embedders' Embed: texts embedded as documents.
func (e *engine) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e == nil {
		return nil, ErrNilEmbedder
	}
	return e.embed(ctx, texts, false)
}

// EmbedQuery is the embedders' EmbedQuery: one search query embedded.
func (e *engine) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if e == nil {
		return nil, ErrNilEmbedder
	}
	v, err := e.embed(ctx, []string{text}, true)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// embed checks texts, splits them into batches and joins the answers.
func (e *engine) embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	if ctx == nil {
		return nil, ErrNoContext
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("%w: text %d is empty", ErrInvalidText, i)
		}
		if !utf8.ValidString(t) {
			return nil, fmt.Errorf("%w: text %d is not valid UTF-8", ErrInvalidText, i)
		}
	}
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); {
		hi, runes := lo, 0
		for hi < len(texts) && hi-lo < e.batchSize {
			n := utf8.RuneCountInString(texts[hi])
			if hi > lo && runes+n > e.maxBatchRunes {
				break
			}
			runes += n
			hi++
		}
		vecs, err := e.batch(ctx, texts[lo:hi], query)
		if err != nil {
			return nil, err
		}
		if len(vecs) != hi-lo {
			return nil, e.badResponse(fmt.Sprintf("%d vectors for %d texts", len(vecs), hi-lo))
		}
		for i, v := range vecs {
			if err := e.checkDims(len(v)); err != nil {
				return nil, fmt.Errorf("%w (text %d)", err, lo+i)
			}
		}
		out = append(out, vecs...)
		lo = hi
	}
	return out, nil
}

func (e *engine) checkDims(n int) error {
	if n == 0 {
		return e.badResponse("an empty vector")
	}
	want := e.dims
	if want == 0 {
		if e.learned.CompareAndSwap(0, int64(n)) {
			return nil
		}
		want = int(e.learned.Load())
	}
	if n != want {
		return e.badResponse(fmt.Sprintf("a vector of %d dimensions where %s has %d", n, e.id, want))
	}
	return nil
}

func (e *engine) badResponse(msg string) error {
	return &APIError{Provider: e.provider, Message: msg, kind: ErrBadResponse}
}

// post sends body as JSON to the engine's URL and decodes a 2xx answer
// into out, retrying what may succeed later.
func (e *engine) post(ctx context.Context, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("embedapi: encoding the request: %w", err)
	}
	for attempt := 1; ; attempt++ {
		apiErr := e.attempt(ctx, payload, out)
		if apiErr == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		apiErr.Attempts = attempt
		if !retryable(apiErr.kind) || attempt > e.maxRetries {
			return apiErr
		}
		wait := backoff(attempt)
		if apiErr.RetryAfter > wait {
			wait = apiErr.RetryAfter
		}
		if wait > maxWait {
			return apiErr
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return apiErr
		}
		if err := e.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func retryable(kind error) bool {
	return kind == ErrRateLimited || kind == ErrUnavailable || kind == ErrTimeout
}

// backoff is the wait before try attempt+1: exponential, with jitter in
// [d/2, d].
func backoff(attempt int) time.Duration {
	d := backoffBase << (attempt - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	return d/2 + rand.N(d/2+1)
}

// attempt sends one request under its own timeout.
func (e *engine) attempt(ctx context.Context, payload []byte, out any) *APIError {
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return &APIError{Provider: e.provider, Message: e.redact(err.Error()), kind: ErrInvalidOption}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentmem-embedapi")
	if e.keyHeader != "" && e.apiKey != "" {
		req.Header.Set(e.keyHeader, e.keyPrefix+e.apiKey)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return e.transportError(actx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		return e.statusError(resp, raw)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return e.transportError(actx, err)
	}
	if len(raw) > maxResponseBytes {
		return &APIError{Provider: e.provider, StatusCode: resp.StatusCode, Message: "reply over 256 MiB: lower BatchSize", kind: ErrBadResponse}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &APIError{Provider: e.provider, StatusCode: resp.StatusCode, Message: "reply is not the documented JSON: " + e.redact(err.Error()), kind: ErrBadResponse}
	}
	return nil
}

func (e *engine) transportError(actx context.Context, err error) *APIError {
	kind := ErrUnavailable
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		kind = ErrTimeout
	}
	msg := err.Error()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		msg = uerr.Err.Error()
	}
	return &APIError{Provider: e.provider, Message: e.redact(msg), kind: kind}
}

// errorBody is the union of the providers' error replies: OpenAI's and
// Gemini's {"error": {…}}, Ollama's {"error": "…"}, Voyage's {"detail": "…"}.
type errorBody struct {
	Error  json.RawMessage `json:"error"`
	Detail json.RawMessage `json:"detail"`
}

type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  string          `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// statusError maps a non-2xx reply, by status and by the provider's error
// code, never by message text.
func (e *engine) statusError(resp *http.Response, raw []byte) *APIError {
	ae := &APIError{Provider: e.provider, StatusCode: resp.StatusCode}
	var keyInvalid, quota bool
	var body errorBody
	if json.Unmarshal(raw, &body) == nil {
		var s string
		var obj errorObject
		switch {
		case json.Unmarshal(body.Error, &s) == nil:
			ae.Message = s
		case json.Unmarshal(body.Error, &obj) == nil:
			ae.Message = obj.Message
			code := ""
			if json.Unmarshal(obj.Code, &code) != nil {
				code = ""
			}
			for _, c := range []string{code, obj.Status, obj.Type} {
				if c != "" {
					ae.Code = c
					break
				}
			}
			quota = code == "insufficient_quota" || obj.Type == "insufficient_quota"
			for _, d := range obj.Details {
				if d.Reason == "API_KEY_INVALID" {
					keyInvalid = true
				}
				if d.RetryDelay != "" {
					if w, err := time.ParseDuration(d.RetryDelay); err == nil && w > ae.RetryAfter {
						ae.RetryAfter = w
					}
				}
			}
		case json.Unmarshal(body.Detail, &s) == nil:
			ae.Message = s
		}
	}
	if ae.Message == "" && len(raw) > 0 && utf8.Valid(raw) {
		ae.Message = strings.TrimSpace(string(raw))
	}
	ae.Message = e.redact(ae.Message)
	if w := retryAfter(resp.Header); w > ae.RetryAfter {
		ae.RetryAfter = w
	}
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || keyInvalid:
		ae.kind, ae.hint = ErrUnauthorized, e.keyHint
	case s == http.StatusForbidden:
		ae.kind = ErrForbidden
	case s == http.StatusNotFound:
		ae.kind = ErrNotFound
	case s == http.StatusTooManyRequests && quota:
		ae.kind = ErrQuotaExceeded
	case s == http.StatusTooManyRequests:
		ae.kind = ErrRateLimited
	case s == http.StatusRequestTimeout:
		ae.kind = ErrTimeout
	case s >= 500:
		ae.kind = ErrUnavailable
	default:
		ae.kind = ErrBadRequest
	}
	return ae
}

// retryAfter reads retry-after-ms (OpenAI) and Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// redact removes the API key from a message and shortens it.
func (e *engine) redact(msg string) string {
	if e.apiKey != "" {
		msg = strings.ReplaceAll(msg, e.apiKey, "[API key]")
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > maxMessageRunes {
		r := []rune(msg)
		msg = string(r[:maxMessageRunes]) + "…"
	}
	return msg
}

// retries is MaxRetries with its default, or 0 with NoRetry (a negative
// MaxRetries stays, to be refused).
func retries(n int, none bool) int {
	switch {
	case none:
		return 0
	case n == 0:
		return defaultMaxRetries
	}
	return n
}
