package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// tallyEmbedder counts the texts it embeds.
type tallyEmbedder struct {
	fakeEmbedder
	mu    sync.Mutex
	texts int
	fail  error
}

func (c *tallyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return nil, c.fail
	}
	c.texts += len(texts)
	return c.fakeEmbedder.Embed(ctx, texts)
}

func (c *tallyEmbedder) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.texts
}

// shared is a driver that several stores of one test share: Close is a
// no-op.
type shared struct{ driver.Driver }

func (shared) Close() error { return nil }

// TestReindex: after a model change Reindex embeds every chunk under the
// prefix and only there; a rerun embeds nothing; after a change behind the
// store's back only the changed chunks are embedded; a hybrid search then
// finds every vector current (it embeds only the query).
func TestReindex(t *testing.T) {
	ctx := t.Context()
	d := shared{newMemDriver(t)}
	plain := store.New(d, nil)
	files := map[string]string{
		"u/main/a.md":   "# Travel\n\n" + strings.Repeat("Prefers trains to planes. ", 30) + "\n\n# Food\n\n" + strings.Repeat("Likes green tea. ", 40) + "\n",
		"u/main/b.md":   "Lives in Hanoi.\n",
		"u/other/c.md":  "Plays chess.\n",
		"v/main/MEM.md": "Not under the prefix.\n",
	}
	for p, c := range files {
		if _, err := plain.Write(ctx, store.WriteRequest{Path: p, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := plain.Reindex(ctx, "u/"); !errors.Is(err, store.ErrInvalidSearchMode) {
		t.Errorf("Reindex without an embedder = %v, want ErrInvalidSearchMode", err)
	}
	if _, err := plain.Reindex(ctx, "../"); !errors.Is(err, store.ErrInvalidPath) && !errors.Is(err, store.ErrInvalidSearchMode) {
		t.Errorf("Reindex of a bad prefix = %v", err)
	}

	e1 := &tallyEmbedder{fakeEmbedder: fakeEmbedder{"m1"}}
	s1 := store.New(d, &store.Options{Embedder: e1})
	st, err := s1.Reindex(ctx, "u/")
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 3 || st.Indexed != 3 || st.Current != 0 || st.Reused != 0 || st.Embedded != e1.count() || st.Embedded < 4 || st.Embedded > 5 {
		t.Fatalf("first Reindex = %+v (embedder saw %d texts)", st, e1.count())
	}
	chunks := st.Embedded
	if st, err := s1.Reindex(ctx, "u/"); err != nil || st != (search.ReindexStats{Files: 3, Current: 3}) || e1.count() != chunks {
		t.Fatalf("rerun = %+v, %v (embedder saw %d texts, %d before)", st, err, e1.count(), chunks)
	}

	// A model change: everything again.
	e2 := &tallyEmbedder{fakeEmbedder: fakeEmbedder{"m2"}}
	s2 := store.New(d, &store.Options{Embedder: e2})
	if st, err := s2.Reindex(ctx, "u/main/"); err != nil || st.Files != 2 || st.Indexed != 2 || st.Reused != 0 || st.Embedded != e2.count() {
		t.Fatalf("Reindex after a model change = %+v, %v", st, err)
	}

	// A change behind the store's back: only the changed chunk.
	f, err := plain.Read(ctx, "u/main/a.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Write(ctx, store.WriteRequest{Path: "u/main/a.md", Content: strings.Replace(f.Content, "tea", "coffee", 1), Expected: f.Version}); err != nil {
		t.Fatal(err)
	}
	before := e2.count()
	st, err = s2.Reindex(ctx, "u/main/")
	if err != nil || st.Files != 2 || st.Current != 1 || st.Indexed != 1 || st.Embedded != 1 || st.Reused < 1 || e2.count() != before+1 {
		t.Fatalf("Reindex after an external edit = %+v, %v (embedder saw %d texts, %d before)", st, err, e2.count(), before)
	}
	before = e2.count()
	res, err := s2.Search(ctx, search.Request{Prefix: "u/main/", Query: "coffee", Limit: 5, MaxFiles: 10, MaxChars: 1000, MaxFileChars: 1000})
	if err != nil || len(res.Matches) == 0 {
		t.Fatalf("search = %+v, %v", res, err)
	}
	if got := e2.count() - before; got != 1 {
		t.Errorf("a search after Reindex embedded %d texts, want 1 (the query)", got)
	}

	// A failing embedder: the error, the work done so far, and a rerun
	// that finishes the rest.
	e3 := &tallyEmbedder{fakeEmbedder: fakeEmbedder{"m3"}, fail: fmt.Errorf("down")}
	s3 := store.New(d, &store.Options{Embedder: e3})
	if st, err := s3.Reindex(ctx, "u/"); err == nil || st.Indexed != 0 || !strings.Contains(err.Error(), "u/main/a.md") {
		t.Fatalf("Reindex with the embedder down = %+v, %v", st, err)
	}
	e3.mu.Lock()
	e3.fail = nil
	e3.mu.Unlock()
	if st, err := s3.Reindex(ctx, "u/"); err != nil || st.Indexed != 3 {
		t.Fatalf("Reindex once the embedder is up = %+v, %v", st, err)
	}
	for _, s := range []*store.Store{plain, s1, s2, s3} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// zeroingEmbedder answers the zero vector for texts holding "qqq" (a
// chunk with no known word) and counts the texts it embeds.
type zeroingEmbedder struct{ tallyEmbedder }

func (z *zeroingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := z.tallyEmbedder.Embed(ctx, texts)
	for i, t := range texts {
		if err == nil && strings.Contains(t, "qqq") {
			vs[i] = make([]float32, len(vs[i]))
		}
	}
	return vs, err
}

// TestIndexKeepsVectorsBesideAZeroOne: a chunk whose vector is zero is
// recorded in the index as a known zero, and the chunks embedded before it
// in the same batch keep theirs (the zero vector once reset them all), so a
// search embeds only the query.
func TestIndexKeepsVectorsBesideAZeroOne(t *testing.T) {
	ctx := t.Context()
	e := &zeroingEmbedder{tallyEmbedder{fakeEmbedder: fakeEmbedder{"m"}}}
	s := store.New(newMemDriver(t), &store.Options{Embedder: e})
	defer s.Close()
	content := "# Trains\n\n" + strings.Repeat("Prefers night trains to planes. ", 30) +
		"\n\n# Noise\n\n" + strings.Repeat("qqq ", 60) +
		"\n\n# Tea\n\n" + strings.Repeat("Drinks green tea every morning. ", 30) + "\n"
	if _, err := s.Write(ctx, store.WriteRequest{Path: "u/main/a.md", Content: content}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	before := e.count()
	if _, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "railway journeys", Mode: search.Hybrid,
		Limit: 5, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 65536}); err != nil {
		t.Fatal(err)
	}
	if n := e.count() - before; n != 1 {
		t.Fatalf("a hybrid search embedded %d texts, want 1 (the query): the index lost the zero chunk or the chunks beside it", n)
	}
}

// TestIndexRecordsAZeroOnlyFile: a file whose only chunk embeds to zero has
// a record all the same (so a search embeds only the query, and Reindex
// finds it current), and that chunk is never scored: a query that matches
// the file by no word finds nothing.
func TestIndexRecordsAZeroOnlyFile(t *testing.T) {
	ctx := t.Context()
	e := &zeroingEmbedder{tallyEmbedder{fakeEmbedder: fakeEmbedder{"m"}}}
	s := store.New(newMemDriver(t), &store.Options{Embedder: e})
	defer s.Close()
	if _, err := s.Write(ctx, store.WriteRequest{Path: "u/main/n.md", Content: strings.Repeat("qqq ", 40) + "\n"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		before := e.count()
		res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "railway journeys", Mode: search.Hybrid,
			Limit: 5, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 65536})
		if err != nil {
			t.Fatal(err)
		}
		if n := e.count() - before; n != 1 {
			t.Fatalf("search %d embedded %d texts, want 1 (the query): the zero chunk was not recorded", i+1, n)
		}
		if len(res.Matches) != 0 {
			t.Fatalf("search %d: %+v, want no match (a zero vector is never scored)", i+1, res.Matches)
		}
		if err := s.WaitIndexed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Reindex(ctx, "u/")
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.Current != 1 || st.Embedded != 0 || st.Indexed != 0 {
		t.Fatalf("Reindex = %+v, want the one file current, nothing embedded", st)
	}
}
