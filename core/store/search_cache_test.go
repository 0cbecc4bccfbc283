package store_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// TestSearchCacheSameResults: a search over files its store analysed before
// returns exactly what a fresh store returns, in every mode, for files of
// one chunk and of many, whole and cut to MaxFileChars.
func TestSearchCacheSameResults(t *testing.T) {
	ctx := t.Context()
	d := newMemDriver(t)
	for i := range 30 {
		content := benchNote(i)
		if i%5 == 0 { // several chunks, under headings
			content += "\n## Travel\n\n" + strings.Repeat(fmt.Sprintf("Flights to Lisbon %d and trains to Porto. ", i), 40)
		}
		if err := d.CreateFile(ctx, driver.File{Path: fmt.Sprintf("u/main/n%02d.md", i), Content: content, Version: fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
	}
	warm := store.New(d, &store.Options{Embedder: &countingEmbedder{}})
	defer warm.Close()
	queries := []string{"which city does the cat live in", "flights Lisbon", "project 3", "trains", "!!!", "detail week"}
	for round := range 3 {
		for _, q := range queries {
			for _, m := range []search.Mode{search.Literal, search.BM25, search.Hybrid} {
				for _, maxFileChars := range []int{65536, 700} {
					r := search.Request{Prefix: "u/main/", Query: q, Mode: m, Limit: 8, MaxFiles: 100, MaxChars: 4000, MaxFileChars: maxFileChars}
					// The indexer settles what earlier searches queued, so
					// that the copy below holds the index rows this search
					// reads (a row written in between changed the vectors
					// one store had and not the other).
					if err := warm.WaitIndexed(ctx); err != nil {
						t.Fatal(err)
					}
					got, err := warm.Search(ctx, r)
					if err != nil {
						t.Fatal(err)
					}
					cold := store.New(memstoreCopy(t, d), &store.Options{Embedder: &countingEmbedder{}})
					want, err := cold.Search(ctx, r)
					cold.Close()
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("round %d, %s %q (max_file_chars %d): a warm store returned\n%+v\na fresh one\n%+v", round, m, q, maxFileChars, got, want)
					}
				}
			}
		}
		if err := warm.WaitIndexed(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// memstoreCopy returns a memstore holding d's rows (the index rows
// included), so that a fresh store sees what the warm one sees.
func memstoreCopy(t *testing.T, d *memstore.Driver) *memstore.Driver {
	t.Helper()
	out := newMemDriver(t)
	entries, err := d.ListFiles(t.Context(), driver.ListParams{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := d.GetFile(t.Context(), e.Path)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil && !f.Tombstone {
			if err := out.CreateFile(t.Context(), *f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// TestSearchCacheNeverStale: a search after a file or its index row
// changed behind the store's back — even keeping its version — scores
// the new content.
func TestSearchCacheNeverStale(t *testing.T) {
	ctx := t.Context()
	d := newMemDriver(t)
	emb := &countingEmbedder{}
	s := store.New(d, &store.Options{Embedder: emb})
	defer s.Close()
	for i := range 5 {
		if _, err := s.Write(ctx, store.WriteRequest{Path: fmt.Sprintf("u/main/n%d.md", i), Content: benchNote(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}
	find := func(mode search.Mode, q string) []string {
		t.Helper()
		res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: q, Mode: mode, Limit: 10, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 65536})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, m := range res.Matches {
			paths = append(paths, m.Path)
		}
		return paths
	}
	for _, m := range []search.Mode{search.BM25, search.Hybrid} {
		find(m, "zebra") // analyses every file
	}
	f, err := d.GetFile(ctx, "u/main/n2.md")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(f.Content, "cat", "zebra", 1)
	if err := d.ReplaceFile(ctx, driver.File{Path: f.Path, Content: edited, Version: f.Version}, f.Version); err != nil {
		t.Fatal(err)
	}
	// The term index learns of a change behind the store's back when it
	// checks the folder again (at most a minute later, or at once after
	// Reindex); until then a file it ranks is read and scored as it is,
	// so its snippet is never the old content's.
	if got := find(search.Hybrid, "zebra"); len(got) == 0 || got[0] != "u/main/n2.md" {
		t.Errorf("hybrid: after a hand edit that kept the version, zebra finds %v, want u/main/n2.md first", got)
	}
	res, err := s.Search(ctx, search.Request{Prefix: "u/main/", Query: "city 2", Mode: search.BM25, Limit: 1, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 65536})
	if err != nil || len(res.Matches) != 1 || !strings.Contains(res.Matches[0].Snippet, "zebra") {
		t.Errorf("bm25: after a hand edit, city 2 = %+v, %v; want n2.md with its new content's snippet", res, err)
	}
	if _, err := s.Reindex(ctx, "u/main/"); err != nil {
		t.Fatal(err)
	}
	if got := find(search.BM25, "zebra"); len(got) == 0 || got[0] != "u/main/n2.md" {
		t.Errorf("bm25: after a hand edit and Reindex, zebra finds %v, want u/main/n2.md first", got)
	}
	if err := s.WaitIndexed(ctx); err != nil {
		t.Fatal(err)
	}

	// An index row replaced, same version, by a malformed one: its old
	// vectors are not scored, so the search embeds the file's chunk itself.
	row, err := d.GetFile(ctx, "u/main/"+search.IndexSegment+"/n3.md")
	if err != nil || row == nil {
		t.Fatalf("index row: %v, %v", row, err)
	}
	find(search.Hybrid, "cat")
	if err := d.ReplaceFile(ctx, driver.File{Path: row.Path, Content: "{not json", Version: row.Version}, row.Version); err != nil {
		t.Fatal(err)
	}
	before := emb.texts.Load()
	find(search.Hybrid, "cat")
	// The query and n3's one chunk (and perhaps the indexer's repair of n3).
	if got := emb.texts.Load() - before; got < 2 {
		t.Errorf("after its index row was corrupted, %d texts were embedded, want at least 2 (the query and the chunk the row no longer holds)", got)
	}
}
