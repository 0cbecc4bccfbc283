package embedapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	_ "github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestRegistered: importing embedapi registers its providers, so a store
// URL's embedder= builds the embedder Parse builds, and hybrid search
// reaches the service.
func TestRegistered(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int, body map[string]any) {
		ollamaAnswer(w, body, 4)
	})
	t.Setenv("OLLAMA_HOST", f.srv.URL)
	t.Setenv("OPENAI_API_KEY", "")
	for _, p := range providers {
		if !strings.Contains(strings.Join(store.Embedders(), ","), p) {
			t.Errorf("store.Embedders() = %v, want %q", store.Embedders(), p)
		}
	}
	s, err := store.Open(t.Context(), "mem://?embedder=ollama:nomic-embed-text", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Embedder().Model(); got != "ollama:nomic-embed-text" {
		t.Errorf("Model() = %q", got)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/a.md", Content: "likes tea"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(t.Context(), search.Request{Prefix: "u/main/", Query: "tea", Mode: search.Hybrid,
		Limit: 5, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("hybrid search = %+v, %v", res, err)
	}
	if len(f.requests()) == 0 {
		t.Error("the hybrid search never reached the embedding service")
	}
	_, err = store.Open(t.Context(), "mem://?embedder=openai:text-embedding-3-small", nil)
	if !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("embedder=openai without a key = %v, want ErrNoAPIKey", err)
	}
	if _, err := store.OpenEmbedder(t.Context(), "gemini:m@x"); !errors.Is(err, ErrInvalidSpec) || !errors.Is(err, store.ErrInvalidURL) {
		t.Errorf("a bad dimension = %v, want ErrInvalidSpec and store.ErrInvalidURL", err)
	}
}
