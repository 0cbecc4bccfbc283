package embedapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestOpenAIRequestAndOrder(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 256)
	})
	p, err := NewOpenAI(t.Context(), "text-embedding-3-small", &OpenAIOptions{BaseURL: f.srv.URL + "/v1/", APIKey: "sk-test", Dimensions: 256})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "openai:text-embedding-3-small@256" {
		t.Errorf("Model() = %q", got)
	}
	texts := []string{"alpha", "beta gamma", "délta"}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, got, texts, 256)
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/embeddings" {
		t.Errorf("request %s %s, want POST /v1/embeddings", r.Method, r.Path)
	}
	if h := r.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	if h := r.Header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q", h)
	}
	want := map[string]any{"model": "text-embedding-3-small", "input": []any{"alpha", "beta gamma", "délta"},
		"encoding_format": "float", "dimensions": float64(256)}
	if !reflect.DeepEqual(r.Body, want) {
		t.Errorf("body = %v, want %v", r.Body, want)
	}
}

func TestOpenAIModelIDs(t *testing.T) {
	for _, c := range []struct {
		model string
		dims  int
		want  string
	}{
		{"text-embedding-3-small", 0, "openai:text-embedding-3-small@1536"},
		{"text-embedding-3-large", 0, "openai:text-embedding-3-large@3072"},
		{"text-embedding-3-large", 1024, "openai:text-embedding-3-large@1024"},
		{"my-local-model", 0, "openai:my-local-model"},
	} {
		p, err := NewOpenAI(t.Context(), c.model, &OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", Dimensions: c.dims})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Model(); got != c.want {
			t.Errorf("%s@%d: Model() = %q, want %q", c.model, c.dims, got, c.want)
		}
	}
}

func TestOpenAIDefaultDimensionsAreNotSent(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 1536)
	})
	p, err := NewOpenAI(t.Context(), "text-embedding-3-small", &OpenAIOptions{BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.requests()[0].Body["dimensions"]; ok {
		t.Errorf("dimensions sent without the Dimensions option: %v", f.requests()[0].Body)
	}
	if h := f.requests()[0].Header.Get("Authorization"); h != "" && !strings.HasPrefix(h, "Bearer ") {
		t.Errorf("Authorization = %q", h)
	}
}

func TestOpenAIBatching(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 3)
	})
	p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, BatchSize: 3, MaxBatchRunes: 25})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7",
		strings.Repeat("h", 10), strings.Repeat("i", 10), strings.Repeat("j", 10), strings.Repeat("k", 30), "l"}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, got, texts, 3)
	var sizes []int
	var all []string
	for _, r := range f.requests() {
		in := strs(r.Body["input"])
		sizes = append(sizes, len(in))
		all = append(all, in...)
	}
	// 3 by count; g7+h+i (22 runes) fit 25, j would not; j+k would not;
	// k (30 runes, over the budget) goes alone.
	if want := []int{3, 3, 3, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	if !reflect.DeepEqual(all, texts) {
		t.Errorf("texts sent %v, want %v", all, texts)
	}
}

func TestOpenAIAzure(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 4)
	})
	p, err := NewOpenAI(t.Context(), "text-embedding-3-small", &OpenAIOptions{
		BaseURL: f.srv.URL + "/openai/deployments/my-embeddings", Dialect: "azure", APIKey: "azure-key", Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "azure:text-embedding-3-small@4" {
		t.Errorf("Model() = %q", got)
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Path != "/openai/deployments/my-embeddings/embeddings" || r.Query != "api-version=2024-10-21" {
		t.Errorf("request to %s?%s", r.Path, r.Query)
	}
	if r.Header.Get("api-key") != "azure-key" || r.Header.Get("Authorization") != "" {
		t.Errorf("api-key = %q, Authorization = %q: want the key in api-key only", r.Header.Get("api-key"), r.Header.Get("Authorization"))
	}
	// A given api-version is kept.
	p, err = NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL + "/openai/deployments/d?api-version=2025-01-01", Dialect: "azure", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if r := f.requests()[1]; r.Query != "api-version=2025-01-01" {
		t.Errorf("query %q, want the given api-version", r.Query)
	}
	// Azure is recognised by its host, and needs a key.
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	_, err = NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: "https://res.openai.azure.com/openai/v1"})
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "AZURE_OPENAI_API_KEY") {
		t.Errorf("Azure without a key: %v, want ErrNoAPIKey naming AZURE_OPENAI_API_KEY", err)
	}
}

func TestVoyage(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 1024)
	})
	p, err := NewVoyage(t.Context(), "voyage-3.5", &OpenAIOptions{BaseURL: f.srv.URL + "/v1", APIKey: "pa-key"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "voyage:voyage-3.5@1024" {
		t.Errorf("Model() = %q", got)
	}
	if _, err := p.Embed(t.Context(), []string{"doc"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.EmbedQuery(t.Context(), "query"); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if want := map[string]any{"model": "voyage-3.5", "input": []any{"doc"}, "input_type": "document"}; !reflect.DeepEqual(reqs[0].Body, want) {
		t.Errorf("Embed body %v, want %v", reqs[0].Body, want)
	}
	if got := reqs[1].Body["input_type"]; got != "query" {
		t.Errorf("EmbedQuery input_type %v, want query", got)
	}
	if reqs[0].Path != "/v1/embeddings" || reqs[0].Header.Get("Authorization") != "Bearer pa-key" {
		t.Errorf("request %s with Authorization %q", reqs[0].Path, reqs[0].Header.Get("Authorization"))
	}
	p, err = NewVoyage(t.Context(), "voyage-3.5", &OpenAIOptions{BaseURL: f.srv.URL, APIKey: "k", Dimensions: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Errorf("1024 dimensions where 256 were asked: %v, want ErrBadResponse", err)
	}
	if got := f.requests()[2].Body["output_dimension"]; got != float64(256) {
		t.Errorf("output_dimension = %v, want 256", got)
	}
	if _, err := NewVoyage(t.Context(), "voyage-3.5", &OpenAIOptions{BaseURL: f.srv.URL, BatchSize: 1001}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("BatchSize 1001: %v, want ErrInvalidOption", err)
	}
}

func TestRetryAfter429(t *testing.T) {
	for _, c := range []struct {
		name   string
		header string
		value  string
		want   time.Duration
	}{
		{"seconds", "Retry-After", "7", 7 * time.Second},
		{"milliseconds", "Retry-After-Ms", "1500", 1500 * time.Millisecond},
		{"date", "Retry-After", time.Now().Add(40 * time.Second).UTC().Format(http.TimeFormat), 38 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
				if n == 0 {
					w.Header().Set(c.header, c.value)
					writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})
					return
				}
				openAIAnswer(w, body, 2)
			})
			p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			waits := noWait((*engine)(p))
			got, err := p.Embed(t.Context(), []string{"x", "y"})
			if err != nil {
				t.Fatal(err)
			}
			wantVectors(t, got, []string{"x", "y"}, 2)
			if len(f.requests()) != 2 || len(*waits) != 1 {
				t.Fatalf("%d requests, waits %v: want 2 and one wait", len(f.requests()), *waits)
			}
			if w := (*waits)[0]; w < c.want || w > c.want+3*time.Second {
				t.Errorf("waited %v, want the server's %v", w, c.want)
			}
		})
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		switch n {
		case 0:
			writeJSON(w, 503, map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}})
		case 1:
			w.WriteHeader(502)
			fmt.Fprint(w, "<html>bad gateway</html>")
		default:
			openAIAnswer(w, body, 2)
		}
	})
	p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	waits := noWait((*engine)(p))
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 3 {
		t.Fatalf("%d requests, want 3", len(f.requests()))
	}
	// Exponential with jitter: [base/2, base], then [base, 2·base].
	if w := *waits; len(w) != 2 || w[0] < backoffBase/2 || w[0] > backoffBase || w[1] < backoffBase || w[1] > 2*backoffBase {
		t.Errorf("waits %v, want one in [%v, %v] then one in [%v, %v]", w, backoffBase/2, backoffBase, backoffBase, 2*backoffBase)
	}
}

func TestRetriesExhausted(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down", "code": "rate_limit_exceeded"}})
	})
	p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	noWait((*engine)(p))
	_, err = p.Embed(t.Context(), []string{"x"})
	ae := wantErr(t, err, ErrRateLimited)
	if ae == nil || ae.Attempts != 3 || ae.StatusCode != 429 || ae.Code != "rate_limit_exceeded" || len(f.requests()) != 3 {
		t.Errorf("err %#v after %d requests, want 3 attempts", ae, len(f.requests()))
	}
	if !strings.HasPrefix(err.Error(), ErrRateLimited.Error()) || !strings.Contains(err.Error(), "slow down") {
		t.Errorf("message %q: want what to fix first, then the server's message", err)
	}
	// NoRetry: once.
	p, _ = NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, NoRetry: true})
	before := len(f.requests())
	if _, err := p.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrRateLimited) || len(f.requests()) != before+1 {
		t.Errorf("NoRetry: %v after %d requests, want ErrRateLimited after 1", err, len(f.requests())-before)
	}
}

func TestLongRetryAfterIsNotWaited(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "daily limit"}})
	})
	p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL})
	waits := noWait((*engine)(p))
	_, err := p.Embed(t.Context(), []string{"x"})
	ae := wantErr(t, err, ErrRateLimited)
	if len(f.requests()) != 1 || len(*waits) != 0 || ae.RetryAfter != time.Hour {
		t.Errorf("%d requests, waits %v, RetryAfter %v: want 1 request, no wait, 1h", len(f.requests()), *waits, ae.RetryAfter)
	}
	// Nor a wait past the context's deadline.
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	f2 := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		w.Header().Set("Retry-After", "59")
		writeJSON(w, 429, map[string]any{})
	})
	p, _ = NewOpenAI(ctx, "m", &OpenAIOptions{BaseURL: f2.srv.URL})
	waits = noWait((*engine)(p))
	ctx2, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	if _, err := p.Embed(ctx2, []string{"x"}); !errors.Is(err, ErrRateLimited) || len(*waits) != 0 {
		t.Errorf("wait past the deadline: %v, waits %v", err, *waits)
	}
}

func TestNotRetried(t *testing.T) {
	for _, c := range []struct {
		status int
		body   map[string]any
		kind   error
	}{
		{401, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: sk-secret-123.", "type": "invalid_request_error", "code": "invalid_api_key"}}, ErrUnauthorized},
		{403, map[string]any{"error": map[string]any{"message": "Project does not have access to model"}}, ErrForbidden},
		{404, map[string]any{"error": map[string]any{"message": "The model `x` does not exist", "code": "model_not_found"}}, ErrNotFound},
		{400, map[string]any{"error": map[string]any{"message": "'$.input' is invalid", "type": "invalid_request_error"}}, ErrBadRequest},
		{413, nil, ErrBadRequest},
		{429, map[string]any{"error": map[string]any{"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}, ErrQuotaExceeded},
	} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
				writeJSON(w, c.status, c.body)
			})
			p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, APIKey: "sk-secret-123"})
			if err != nil {
				t.Fatal(err)
			}
			noWait((*engine)(p))
			_, err = p.Embed(t.Context(), []string{"x"})
			ae := wantErr(t, err, c.kind)
			if len(f.requests()) != 1 {
				t.Errorf("%d requests, want 1 (no retry)", len(f.requests()))
			}
			if ae == nil || ae.StatusCode != c.status {
				t.Errorf("APIError %#v, want status %d", ae, c.status)
			}
			if strings.Contains(err.Error(), "sk-secret-123") {
				t.Errorf("error echoes the API key: %v", err)
			}
			if c.kind == ErrUnauthorized && !strings.Contains(err.Error(), "OPENAI_API_KEY") {
				t.Errorf("401 %q: want it to say where the key comes from", err)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		<-r.Context().Done() // never answers; the client gives up
	})
	p, err := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, Timeout: 20 * time.Millisecond, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	noWait((*engine)(p))
	_, err = p.Embed(t.Context(), []string{"x"})
	wantErr(t, err, ErrTimeout)
	if len(f.requests()) != 2 {
		t.Errorf("%d requests, want 2 (a timeout is retried)", len(f.requests()))
	}
}

func TestContextCancel(t *testing.T) {
	arrived := make(chan struct{}, 4)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	for _, noRetry := range []bool{false, true} {
		p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, NoRetry: noRetry})
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-arrived; cancel() }()
		before := len(f.requests())
		if _, err := p.Embed(ctx, []string{"x"}); err != context.Canceled {
			t.Errorf("NoRetry %v: err = %v, want context.Canceled itself", noRetry, err)
		}
		if n := len(f.requests()) - before; n != 1 {
			t.Errorf("%d requests after cancel, want 1", n)
		}
	}
	// Cancelled while waiting to retry (the real sleep).
	f2 := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		w.Header().Set("Retry-After", "30")
		writeJSON(w, 429, map[string]any{})
		arrived <- struct{}{}
	})
	p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f2.srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	if _, err := p.Embed(ctx, []string{"x"}); err != context.Canceled {
		t.Errorf("cancelled during backoff: %v, want context.Canceled", err)
	}
	// Already cancelled: no request.
	before := len(f.requests())
	if _, err := p.Embed(ctx, []string{"x"}); err != context.Canceled || len(f.requests()) != before {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestMalformedResponses(t *testing.T) {
	for _, c := range []struct {
		name  string
		dims  int
		reply string
	}{
		{"not JSON", 0, `<html>hello</html>`},
		{"too few", 0, `{"data":[{"index":0,"embedding":[1,2]}]}`},
		{"too many", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]},{"index":2,"embedding":[1,2]}]}`},
		{"repeated index", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`},
		{"index out of range", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[1,2]}]}`},
		{"no embedding", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":1}]}`},
		{"empty vector", 0, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`},
		{"mixed dimensions", 0, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`},
		{"other dimensions than asked", 3, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`},
		{"not numbers", 0, `{"data":[{"index":0,"embedding":["a"]},{"index":1,"embedding":["b"]}]}`},
		{"float32 overflow", 0, `{"data":[{"index":0,"embedding":[1e300]},{"index":1,"embedding":[1]}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
				fmt.Fprint(w, c.reply)
			})
			p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL, Dimensions: c.dims})
			noWait((*engine)(p))
			got, err := p.Embed(t.Context(), []string{"x", "y"})
			wantErr(t, err, ErrBadResponse)
			if got != nil || len(f.requests()) != 1 {
				t.Errorf("got %v after %d requests, want nothing after 1", got, len(f.requests()))
			}
		})
	}
}

func TestDimensionsChangeAcrossCalls(t *testing.T) {
	dims := 3
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, dims)
	})
	p, _ := NewOpenAI(t.Context(), "local", &OpenAIOptions{BaseURL: f.srv.URL})
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	dims = 4 // the server swapped the model under the same name
	if _, err := p.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Errorf("4 dimensions after 3: %v, want ErrBadResponse", err)
	}
}

func TestTexts(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		openAIAnswer(w, body, 2)
	})
	p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: f.srv.URL})
	if got, err := p.Embed(t.Context(), nil); err != nil || len(got) != 0 {
		t.Errorf("no texts: %v, %v", got, err)
	}
	if _, err := p.Embed(t.Context(), []string{"a", ""}); !errors.Is(err, ErrInvalidText) || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("empty text: %v, want ErrInvalidText naming text 1", err)
	}
	if _, err := p.Embed(t.Context(), []string{"a\xff"}); !errors.Is(err, ErrInvalidText) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if len(f.requests()) != 0 {
		t.Errorf("%d requests, want none", len(f.requests()))
	}
	//lint:ignore SA1012 a nil context is the case under test
	if _, err := p.Embed(nil, []string{"a"}); !errors.Is(err, ErrNoContext) { //nolint:staticcheck
		t.Errorf("nil context: %v", err)
	}
	var nilP *OpenAI
	if _, err := nilP.Embed(t.Context(), []string{"a"}); !errors.Is(err, ErrNilEmbedder) || nilP.Model() != "" {
		t.Errorf("nil embedder: %v", err)
	}
	if _, err := nilP.EmbedQuery(t.Context(), "a"); !errors.Is(err, ErrNilEmbedder) {
		t.Errorf("nil embedder: %v", err)
	}
}

func TestOpenAIOptions(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	if _, err := NewOpenAI(t.Context(), "text-embedding-3-small", nil); !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v, want ErrNoAPIKey naming OPENAI_API_KEY", err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-env")
	p, err := NewOpenAI(t.Context(), "text-embedding-3-small", nil)
	if err != nil || p.url != "https://api.openai.com/v1/embeddings" || p.apiKey != "sk-env" {
		t.Errorf("defaults: %v, url %q", err, p.url)
	}
	t.Setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
	if p, _ := NewOpenAI(t.Context(), "m", nil); p.url != "http://localhost:8000/v1/embeddings" {
		t.Errorf("OPENAI_BASE_URL: url %q", p.url)
	}
	for name, o := range map[string]*OpenAIOptions{
		"batch over 2048":  {BatchSize: 2049},
		"negative batch":   {BatchSize: -1},
		"negative dims":    {Dimensions: -1},
		"negative retries": {MaxRetries: -1},
		"negative timeout": {Timeout: -time.Second},
		"negative runes":   {MaxBatchRunes: -1},
		"base URL":         {BaseURL: "localhost:8000"},
		"base URL scheme":  {BaseURL: "ftp://x/v1"},
		"unknown dialect":  {Dialect: "cohere"},
	} {
		if _, err := NewOpenAI(t.Context(), "m", o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := NewOpenAI(t.Context(), " ", nil); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
	//lint:ignore SA1012 a nil context is the case under test
	if _, err := NewOpenAI(nil, "m", nil); !errors.Is(err, ErrNoContext) { //nolint:staticcheck
		t.Errorf("nil context: %v", err)
	}
}

func TestNetworkError(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {})
	url := f.srv.URL
	f.srv.Close()
	p, _ := NewOpenAI(t.Context(), "m", &OpenAIOptions{BaseURL: url, MaxRetries: 2})
	waits := noWait((*engine)(p))
	_, err := p.Embed(t.Context(), []string{"x"})
	ae := wantErr(t, err, ErrUnavailable)
	if ae.Attempts != 3 || len(*waits) != 2 {
		t.Errorf("attempts %d, waits %v: want 3 and 2", ae.Attempts, *waits)
	}
}
