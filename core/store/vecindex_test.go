package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// topicEmbedder gives a text that names "zorblat" or "quixle" (one topic,
// in two made-up words no word list relates) one direction, every other
// text another, a little apart by length.
type topicEmbedder struct{}

func (topicEmbedder) Model() string { return "topic-1" }

func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if strings.Contains(t, "zorblat") || strings.Contains(t, "quixle") {
			out[i] = []float32{1, 0, 0.01}
		} else {
			out[i] = []float32{0, 1, float32(len(t)%17) / 100}
		}
	}
	return out, nil
}

// TestHybridSearchOfALargeFolder: in a folder larger than MaxFiles, a
// hybrid search finds a note that shares no word with the question, by
// its vector, from the folder's vector cache (once it is built), and the
// term index covers every file.
func TestHybridSearchOfALargeFolder(t *testing.T) {
	ctx := t.Context()
	s := store.New(newMemDriver(t), &store.Options{Embedder: topicEmbedder{}})
	defer s.Close()
	for i := range 300 {
		c := fmt.Sprintf("Note %d: the weather was fine and we walked to the market.", i)
		if i == 217 {
			c = "The zorblat is parked behind the garage."
		}
		if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/n%03d.md", i), Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	req := search.Request{Prefix: "u/main/", Query: "where is my quixle", Mode: search.Hybrid, Limit: 5, MaxFiles: 100, MaxChars: 2000, MaxFileChars: 1000}
	if _, err := s.Search(ctx, req); err != nil { // builds the indexes
		t.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, req); err != nil { // the term index is ready: builds the vector cache
		t.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	found := append(res.Matches, res.Related...)
	if res.Fallback != "" || res.Scanned != 300 || len(found) == 0 || found[0].Path != "u/main/n217.md" {
		t.Fatalf("fallback %q, scanned %d, found %+v; want n217.md first of 300", res.Fallback, res.Scanned, found)
	}
}
