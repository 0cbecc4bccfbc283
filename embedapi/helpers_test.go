package embedapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// request is what a fake server received.
type request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
}

// fake is a local server; handle answers request n (from 0).
type fake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []request
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int, body map[string]any)) *fake {
	t.Helper()
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not a JSON object: %v: %s", err, raw)
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		f.mu.Unlock()
		handle(w, r, n, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

// noWait makes e's backoff instant and records the waits asked for.
func noWait(e *engine) *[]time.Duration {
	var mu sync.Mutex
	waits := &[]time.Duration{}
	e.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return waits
}

// vec is the fake vector of text: its rune count, then its first byte
// plus i.
func vec(text string, dims int) []float32 {
	v := make([]float32, dims)
	v[0] = float32(len([]rune(text)))
	for i := 1; i < dims; i++ {
		v[i] = float32(int(text[0]) + i)
	}
	return v
}

func strs(v any) []string {
	a, _ := v.([]any)
	out := make([]string, len(a))
	for i, x := range a {
		out[i], _ = x.(string)
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// openAIAnswer answers an OpenAI embeddings request with dims-dimensional
// vectors, data in reverse order (index says where each goes).
func openAIAnswer(w http.ResponseWriter, body map[string]any, dims int) {
	in := strs(body["input"])
	data := make([]map[string]any, 0, len(in))
	for i := len(in) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vec(in[i], dims)})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data, "model": body["model"],
		"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
}

func wantVectors(t *testing.T, got [][]float32, texts []string, dims int) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		want := vec(text, dims)
		if len(got[i]) != dims {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(got[i]), dims)
		}
		for j := range want {
			if got[i][j] != want[j] {
				t.Fatalf("vector %d = %v, want %v (the vector of %q)", i, got[i], want, text)
			}
		}
	}
}

func wantErr(t *testing.T, err error, kind error) *APIError {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	var ae *APIError
	errors.As(err, &ae)
	return ae
}
