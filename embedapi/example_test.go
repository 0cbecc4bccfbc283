package embedapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/agentmem/agentmem/embedapi"
)

// openAIServer stands in for https://api.openai.com/v1: it answers
// /v1/embeddings with 4-dimensional vectors.
func openAIServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Data []item `json:"data"`
		}{}
		for i, s := range req.Input {
			resp.Data = append(resp.Data, item{i, []float32{float32(len(s)), 0, 1, 0}})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
}

func ExampleNewOpenAI() {
	srv := openAIServer()
	defer srv.Close()
	ctx := context.Background()

	emb, err := embedapi.NewOpenAI(ctx, "text-embedding-3-small", &embedapi.OpenAIOptions{
		BaseURL:    srv.URL + "/v1", // default https://api.openai.com/v1
		APIKey:     "sk-…",          // default $OPENAI_API_KEY
		Dimensions: 4,
	})
	if err != nil {
		log.Fatal(err)
	}
	vecs, err := emb.Embed(ctx, []string{"the deploy runs on Fridays", "tea"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(emb.Model())
	fmt.Println(len(vecs), vecs[1])
	// Output:
	// openai:text-embedding-3-small@4
	// 2 [3 0 1 0]
}

func ExampleGemini_EmbedQuery() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Requests []struct {
				TaskType string `json:"taskType"`
			} `json:"requests"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Println(r.URL.Path, req.Requests[0].TaskType)
		fmt.Fprint(w, `{"embeddings": [{"values": [0.6, 0.8]}]}`)
	}))
	defer srv.Close()
	ctx := context.Background()

	emb, err := embedapi.NewGemini(ctx, "gemini-embedding-001", &embedapi.GeminiOptions{
		BaseURL: srv.URL + "/v1beta", APIKey: "AIza…", Dimensions: 2})
	if err != nil {
		log.Fatal(err)
	}
	doc, _ := emb.Embed(ctx, []string{"Ana prefers tea"})
	query, _ := emb.EmbedQuery(ctx, "what does Ana drink?")
	fmt.Println(emb.Model(), doc[0], query)
	// Output:
	// /v1beta/models/gemini-embedding-001:batchEmbedContents RETRIEVAL_DOCUMENT
	// /v1beta/models/gemini-embedding-001:batchEmbedContents RETRIEVAL_QUERY
	// gemini:gemini-embedding-001@2 [0.6 0.8] [0.6 0.8]
}

func ExampleNewOllama() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"model": "nomic-embed-text", "embeddings": [[0.1, 0.2, 0.3]]}`)
	}))
	defer srv.Close()
	ctx := context.Background()

	emb, err := embedapi.NewOllama(ctx, "nomic-embed-text", &embedapi.OllamaOptions{
		BaseURL: srv.URL}) // default $OLLAMA_HOST, else http://127.0.0.1:11434
	if err != nil {
		log.Fatal(err)
	}
	vecs, err := emb.Embed(ctx, []string{"hello"})
	fmt.Println(emb.Model(), vecs, err)
	// Output:
	// ollama:nomic-embed-text [[0.1 0.2 0.3]] <nil>
}

func ExampleParse() {
	// The spec of the store URL's embedder= parameter; keys come from the
	// environment (here Ollama's, which needs none).
	emb, err := embedapi.Parse(context.Background(), "ollama:nomic-embed-text")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(emb.Model())
	_, err = embedapi.Parse(context.Background(), "cohere:embed-v4.0")
	fmt.Println(err)
	// Output:
	// ollama:nomic-embed-text
	// embedapi: invalid embedder spec: use openai:MODEL, gemini:MODEL, ollama:MODEL or voyage:MODEL, optionally @DIMENSIONS: unknown provider "cohere"
}
