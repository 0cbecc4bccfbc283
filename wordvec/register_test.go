package wordvec

import (
	"errors"
	"slices"
	"testing"

	_ "github.com/agentmem/agentmem/core/memstore" // the "mem" scheme
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestRegistered: importing wordvec registers "wordvec", so a store URL's
// embedder=wordvec gets New's embedder, and hybrid search works on it.
func TestRegistered(t *testing.T) {
	want := newEmbedder(t).Model()
	s, err := store.Open(t.Context(), "mem://?embedder=wordvec", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Embedder(); got == nil || got.Model() != want {
		t.Fatalf("embedder=wordvec: %v, want model %q", got, want)
	}
	if _, err := s.Write(t.Context(), store.WriteRequest{Path: "u/main/a.md", Content: "Prefers trains to planes."}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(t.Context(), search.Request{Prefix: "u/main/", Query: "railway", Mode: search.Hybrid,
		Limit: 5, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
	// Found by meaning alone in a folder of one file: related, not a match.
	if err != nil || len(res.Matches) != 0 || len(res.Related) != 1 {
		t.Fatalf("hybrid search for a word the file lacks = %+v, %v; want it related", res, err)
	}
	if e, err := store.OpenEmbedder(t.Context(), "wordvec:uniform"); err != nil || e.Model() != want+"+uniform" {
		t.Errorf("wordvec:uniform = %v, %v", e, err)
	}
	if _, err := store.OpenEmbedder(t.Context(), "wordvec:glove"); !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, store.ErrInvalidURL) {
		t.Errorf("wordvec:glove = %v, want ErrInvalidOptions and store.ErrInvalidURL", err)
	}
}

// TestRegisteredIsNew: the registered embedder, made lazily, has New's
// model id and New's vectors.
func TestRegisteredIsNew(t *testing.T) {
	for spec, opts := range map[string]*Options{"wordvec": nil, "wordvec:uniform": {Weighting: WeightUniform}} {
		want, err := New(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := store.OpenEmbedder(t.Context(), spec)
		if err != nil || got.Model() != want.Model() {
			t.Fatalf("%s: %v, %v; want model %q", spec, got, err, want.Model())
		}
		texts := []string{"Prefers trains to planes", "tea"}
		a, err1 := got.Embed(t.Context(), texts)
		b, err2 := want.Embed(t.Context(), texts)
		if err1 != nil || err2 != nil || len(a) != 2 || len(b) != 2 || !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[1]) {
			t.Errorf("%s: vectors differ from New's: %v %v", spec, err1, err2)
		}
	}
}
