package embedapi

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// geminiAnswer answers a batchEmbedContents request, in request order.
func geminiAnswer(w http.ResponseWriter, body map[string]any, dims int) {
	reqs, _ := body["requests"].([]any)
	embs := make([]map[string]any, len(reqs))
	for i, r := range reqs {
		parts := r.(map[string]any)["content"].(map[string]any)["parts"].([]any)
		embs[i] = map[string]any{"values": vec(parts[0].(map[string]any)["text"].(string), dims)}
	}
	writeJSON(w, 200, map[string]any{"embeddings": embs})
}

func TestGeminiRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		geminiAnswer(w, body, 768)
	})
	p, err := NewGemini(t.Context(), "models/gemini-embedding-001", &GeminiOptions{BaseURL: f.srv.URL + "/v1beta", APIKey: "AIza-test", Dimensions: 768})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "gemini:gemini-embedding-001@768" {
		t.Errorf("Model() = %q", got)
	}
	texts := []string{"first note", "second"}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, got, texts, 768)
	q, err := p.EmbedQuery(t.Context(), "what did I note?")
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, [][]float32{q}, []string{"what did I note?"}, 768)

	reqs := f.requests()
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || r.Query != "" {
		t.Errorf("request %s %s?%s", r.Method, r.Path, r.Query)
	}
	if r.Header.Get("x-goog-api-key") != "AIza-test" || r.Header.Get("Authorization") != "" {
		t.Errorf("x-goog-api-key %q, Authorization %q", r.Header.Get("x-goog-api-key"), r.Header.Get("Authorization"))
	}
	one := func(text, task string) map[string]any {
		return map[string]any{"model": "models/gemini-embedding-001", "content": map[string]any{"parts": []any{map[string]any{"text": text}}},
			"taskType": task, "outputDimensionality": float64(768)}
	}
	if want := map[string]any{"requests": []any{one("first note", "RETRIEVAL_DOCUMENT"), one("second", "RETRIEVAL_DOCUMENT")}}; !reflect.DeepEqual(r.Body, want) {
		t.Errorf("body %v\nwant %v", r.Body, want)
	}
	if want := map[string]any{"requests": []any{one("what did I note?", "RETRIEVAL_QUERY")}}; !reflect.DeepEqual(reqs[1].Body, want) {
		t.Errorf("query body %v\nwant %v", reqs[1].Body, want)
	}
}

func TestGeminiBatching(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		geminiAnswer(w, body, 3072)
	})
	p, err := NewGemini(t.Context(), "gemini-embedding-001", &GeminiOptions{BaseURL: f.srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Model(); got != "gemini:gemini-embedding-001@3072" {
		t.Errorf("Model() = %q", got)
	}
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = strings.Repeat(string(rune('a'+i%26)), 1+i%7)
	}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	wantVectors(t, got, texts, 3072)
	var sizes []int
	for _, r := range f.requests() {
		sizes = append(sizes, len(r.Body["requests"].([]any)))
		if _, ok := r.Body["requests"].([]any)[0].(map[string]any)["outputDimensionality"]; ok {
			t.Errorf("outputDimensionality sent without the Dimensions option")
		}
	}
	if want := []int{100, 100, 50}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	if _, err := NewGemini(t.Context(), "gemini-embedding-001", &GeminiOptions{BaseURL: f.srv.URL, BatchSize: 101}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("BatchSize 101: %v, want ErrInvalidOption", err)
	}
}

func TestGeminiErrors(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int, body map[string]any) {
		switch n {
		case 0: // Gemini's answer to a bad key: 400 with reason API_KEY_INVALID
			writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": "API key not valid. Please pass a valid API key.",
				"status": "INVALID_ARGUMENT", "details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}}}})
		case 1:
			writeJSON(w, 429, map[string]any{"error": map[string]any{"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED",
				"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}}}})
		case 2:
			geminiAnswer(w, body, 4)
		default:
			writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": "at most 100 requests can be in one batch", "status": "INVALID_ARGUMENT"}})
		}
	})
	p, _ := NewGemini(t.Context(), "gemini-embedding-001", &GeminiOptions{BaseURL: f.srv.URL, APIKey: "bad-key", Dimensions: 4})
	waits := noWait((*engine)(p))
	_, err := p.Embed(t.Context(), []string{"x"})
	ae := wantErr(t, err, ErrUnauthorized)
	if len(f.requests()) != 1 || ae.Code != "INVALID_ARGUMENT" || !strings.Contains(err.Error(), "GEMINI_API_KEY") || strings.Contains(err.Error(), "bad-key") {
		t.Errorf("bad key: %v after %d requests", err, len(f.requests()))
	}
	if _, err := p.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatalf("after RESOURCE_EXHAUSTED with a retryDelay: %v", err)
	}
	if len(*waits) != 1 || (*waits)[0] != 12*time.Second {
		t.Errorf("waits %v, want the 12s of RetryInfo", *waits)
	}
	_, err = p.Embed(t.Context(), []string{"x"})
	wantErr(t, err, ErrBadRequest)
	if len(f.requests()) != 4 {
		t.Errorf("%d requests, want 4 (400 not retried)", len(f.requests()))
	}
}

func TestGeminiOptions(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	if _, err := NewGemini(t.Context(), "gemini-embedding-001", nil); !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("no key: %v, want ErrNoAPIKey", err)
	}
	t.Setenv("GEMINI_API_KEY", "gemini-key")
	p, err := NewGemini(t.Context(), "gemini-embedding-001", nil)
	if err != nil || p.apiKey != "gemini-key" || p.url != "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents" {
		t.Errorf("defaults: %v, %q", err, p.url)
	}
	t.Setenv("GOOGLE_API_KEY", "google-key")
	if p, _ := NewGemini(t.Context(), "gemini-embedding-001", nil); p.apiKey != "google-key" {
		t.Errorf("GOOGLE_API_KEY does not take precedence over GEMINI_API_KEY")
	}
	for _, m := range []string{"gemini/embedding", "a:b", "x?y"} {
		if _, err := NewGemini(t.Context(), m, nil); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("model %q: %v, want ErrInvalidOption", m, err)
		}
	}
	if _, err := NewGemini(t.Context(), "models/", nil); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
}
