package embedapi

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func ollamaAnswer(w http.ResponseWriter, body map[string]any, dims int) {
	in := strs(body["input"])
	embs := make([][]float32, len(in))
	for i, t := range in {
		embs[i] = vec(t, dims)
	}
	writeJSON(w, 200, map[string]any{"model": body["model"], "embeddings": embs, "total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8})
}

func TestOllamaRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		ollamaAnswer(w, body, 768)
	})
	p, err := NewOllama(t.Context(), "nomic-embed-text", &OllamaOptions{BaseURL: f.srv.URL, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "ollama:nomic-embed-text" {
		t.Errorf("Model() = %q", got)
	}
	texts := []string{"one", "two", "three"}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, got, texts, 768)
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/api/embed" || r.Header.Get("Authorization") != "" {
		t.Errorf("request %s %s, Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
	}
	if want := map[string]any{"model": "nomic-embed-text", "input": []any{"one", "two"}}; !reflect.DeepEqual(r.Body, want) {
		t.Errorf("body %v, want %v", r.Body, want)
	}
	if want := []any{"three"}; !reflect.DeepEqual(reqs[1].Body["input"], want) {
		t.Errorf("second batch %v", reqs[1].Body["input"])
	}
	// Dimensions are sent and checked.
	p, _ = NewOllama(t.Context(), "qwen3-embedding:0.6b", &OllamaOptions{BaseURL: f.srv.URL, Dimensions: 256})
	if got := p.Model(); got != "ollama:qwen3-embedding:0.6b@256" {
		t.Errorf("Model() = %q", got)
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Errorf("768 dimensions where 256 were asked: %v", err)
	}
	if got := f.requests()[2].Body["dimensions"]; got != float64(256) {
		t.Errorf("dimensions = %v", got)
	}
}

func TestOllamaModelNotFound(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		writeJSON(w, 404, map[string]any{"error": `model "nomic-embed-text" not found, try pulling it first`})
	})
	p, _ := NewOllama(t.Context(), "nomic-embed-text", &OllamaOptions{BaseURL: f.srv.URL})
	noWait((*engine)(p))
	_, err := p.Embed(t.Context(), []string{"x"})
	wantErr(t, err, ErrNotFound)
	if !strings.Contains(err.Error(), "try pulling it first") || len(f.requests()) != 1 {
		t.Errorf("%v after %d requests", err, len(f.requests()))
	}
}

func TestOllamaHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "http://127.0.0.1:11434",
		"0.0.0.0":                "http://0.0.0.0:11434",
		"gpu-box:8080":           "http://gpu-box:8080",
		"example.com/ollama":     "http://example.com:11434/ollama",
		"https://ollama.example": "https://ollama.example",
		"[::1]":                  "http://[::1]:11434",
	} {
		if got := ollamaHost(in); got != want {
			t.Errorf("OLLAMA_HOST=%q: %q, want %q", in, got, want)
		}
	}
	t.Setenv("OLLAMA_HOST", "gpu-box:8080")
	if p, err := NewOllama(t.Context(), "m", nil); err != nil || p.url != "http://gpu-box:8080/api/embed" {
		t.Errorf("OLLAMA_HOST: %v, %q", err, p.url)
	}
}

func TestOllamaWrongCount(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		writeJSON(w, 200, map[string]any{"model": "m", "embeddings": [][]float32{{1, 2}}})
	})
	p, _ := NewOllama(t.Context(), "m", &OllamaOptions{BaseURL: f.srv.URL})
	got, err := p.Embed(t.Context(), []string{"x", "y"})
	wantErr(t, err, ErrBadResponse)
	if got != nil || !strings.Contains(err.Error(), "1 vectors for 2 texts") {
		t.Errorf("got %v, %v", got, err)
	}
}
