package console

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// letterEmbedder embeds a text as its letter counts: deterministic, never
// the zero vector.
type letterEmbedder struct{}

func (letterEmbedder) Model() string { return "letters" }

func (letterEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 27)
		v[26] = 1
		for _, r := range strings.ToLower(t) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, nil
}

// The rows a store keeps for its search index (reserved names beside the
// files) are neither listed by the API nor shown by the pages: the
// notebook page once answered 400 on a store with an embedder, as soon as
// the index row of a file existed.
func TestSearchIndexRowsHidden(t *testing.T) {
	s := store.New(newMemDriver(t), &store.Options{Embedder: letterEmbedder{}})
	t.Cleanup(func() { s.Close() })
	e := newEnvOn(t, s, nil)
	ctx := t.Context()
	if _, err := s.Write(ctx, store.WriteRequest{Path: "alice/main/MEMORY.md", Content: "- prefers night trains\n"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, err := s.Driver().ListFiles(ctx, driver.ListParams{Prefix: "alice/", Limit: 10}); err != nil || len(rows) < 2 {
		t.Fatalf("the driver lists %v, %v: want the file and its index row", rows, err)
	}
	page := e.do(req{method: "GET", target: "/api/v1/namespaces/alice/files", key: "alice-key"}).want(200, "").json()
	if files := page["files"].([]any); len(files) != 1 || files[0].(map[string]any)["path"] != "main/MEMORY.md" {
		t.Fatalf("listed %v, want only main/MEMORY.md", files)
	}
	sid := e.signIn("alice-key")
	if w := e.page(pageReq{method: "GET", target: "/ns/alice/", cookie: sid}); w.Code != http.StatusOK || strings.Contains(w.Body.String(), store.ReservedSegmentPrefix) {
		t.Fatalf("notebook page: %d, shows a reserved row: %v", w.Code, strings.Contains(w.Body.String(), store.ReservedSegmentPrefix))
	}
}
