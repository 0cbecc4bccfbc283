package contract

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// hybridStore returns a store over the Env's driver with emb as its
// embedder (history on when history is set), closed at the end of the test.
func hybridStore(t *testing.T, e *Env, emb search.Embedder, history bool) *store.Store {
	t.Helper()
	opts := e.Options()
	opts.Embedder = emb
	if history {
		opts.History = &store.HistoryOptions{}
	}
	s := e.NewStore(t, opts, nil)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func isConflict(err error) bool {
	return errors.Is(err, store.ErrConflict)
}

func waitIndexed(t *testing.T, s *store.Store) {
	t.Helper()
	if err := s.WaitIndexed(ctx(t)); err != nil {
		t.Fatalf("WaitIndexed: %v", err)
	}
}

// rawPaths lists every row under prefix through the driver itself.
func rawPaths(t *testing.T, d driver.Driver, prefix string) []string {
	t.Helper()
	es, err := d.ListFiles(ctx(t), driver.ListParams{Prefix: prefix, Limit: 1000})
	if err != nil {
		t.Fatalf("ListFiles %q: %v", prefix, err)
	}
	var out []string
	for _, e := range es {
		if !e.Tombstone {
			out = append(out, e.Path)
		}
	}
	return out
}

func indexRows(t *testing.T, d driver.Driver, prefix string) []string {
	var out []string
	for _, p := range rawPaths(t, d, prefix) {
		if search.IsIndexPath(p) {
			out = append(out, p)
		}
	}
	return out
}

// hybridNotes are files whose words a paraphrase query shares with one of
// them only through FakeEmbedder's synonyms.
var hybridNotes = map[string]string{
	"car.md":    "I take the automobile to the office every morning.",
	"cat.md":    "Our kitten sleeps on the sofa all afternoon.",
	"health.md": "Booked the physician for the yearly check-up.",
	"garden.md": "Tomatoes and basil grow well on the balcony.",
}

func hybridSearch(t *testing.T, s *store.Store, prefix, q string, mode search.Mode) search.Result {
	t.Helper()
	return mustSearch(t, s, search.Request{Prefix: prefix, Query: q, Mode: mode, Limit: 5, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 20000})
}

// rawCreate writes a file through the driver, behind the store's back (as
// another process, the CLI or a hand edit would).
func rawCreate(t *testing.T, d driver.Driver, path, content, version string) {
	t.Helper()
	if err := d.CreateFile(ctx(t), driver.File{Path: path, Content: content, Version: version}); err != nil {
		t.Fatalf("CreateFile %s: %v", path, err)
	}
}

var vectorCases = []Case{
	{"hybrid_no_match_is_no_match", func(t *testing.T, e *Env) {
		// A search with an embedder says "no match" as BM25 does: a file
		// that shares no word of the query (nor a related word) and does
		// not stand out by meaning is no match, and Truncated counts only
		// matches left out.
		s := hybridStore(t, e, &FakeEmbedder{}, false)
		const p = "u/main/"
		notes := map[string]string{
			"MEMORY.md":   "# Memory\n\n- notes on the car, the cat, health and the garden\n",
			"filler.md":   strings.Repeat("a", 20000),
			"shopping.md": "Buy oat milk, rye bread and lemons on Saturday.",
		}
		maps.Copy(notes, hybridNotes)
		for name, c := range notes {
			create(t, s, p+name, c)
		}
		waitIndexed(t, s)
		// A question FakeEmbedder finds nothing like: no word of it shares
		// a hashed dimension with any note's words.
		absent := ""
		for _, q := range []string{"zebra giraffe quantum", "submarine astrology", "knitting cryptocurrency", "opera skydiving", "goldfish chess"} {
			near := false
			for name, c := range notes {
				near = near || cosine(fakeVector(q), fakeVector(name+" "+c)) > 0.05
			}
			if !near {
				absent = q
				break
			}
		}
		if absent == "" {
			t.Fatal("every candidate question is near a note for FakeEmbedder; add one that is not")
		}
		var words []string // BM25's matches when one file has every word
		for _, m := range []search.Mode{search.BM25, search.Hybrid} {
			res := mustSearch(t, s, search.Request{Prefix: p, Query: absent, Mode: m, Limit: 3, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 30000})
			if len(res.Matches) != 0 || res.Truncated {
				t.Fatalf("%s: %q, which no file mentions = %v (truncated %v), want no match, not truncated", m, absent, matchPaths(res), res.Truncated)
			}
			if len(res.Related) > 3 {
				t.Fatalf("%s: %d related files, want at most 3", m, len(res.Related))
			}
			// Every word of the query in one file: words decide, and no
			// file found by vectors alone is returned at score 0.
			res = mustSearch(t, s, search.Request{Prefix: p, Query: "kitten sofa afternoon", Mode: m, Limit: 3, MaxFiles: 100, MaxChars: 4000, MaxFileChars: 30000})
			if len(res.Matches) == 0 || res.Matches[0].Path != p+"cat.md" || res.Truncated || len(res.Related) != 0 {
				t.Fatalf("%s: %v (truncated %v), want cat.md first, not truncated", m, matchPaths(res), res.Truncated)
			}
			if m == search.BM25 {
				words = matchPaths(res)
			}
			for _, mt := range res.Matches {
				if mt.Score <= 0 || !slices.Contains(words, mt.Path) {
					t.Fatalf("%s: %s at score %v, want only files sharing the query's words (%v)", m, mt.Path, mt.Score, words)
				}
			}
		}
	}},
	{"hybrid_fresh_after_write", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, true)
		const p = "kamal/main/"
		for name, c := range hybridNotes {
			create(t, s, p+name, c)
		}
		waitIndexed(t, s)
		if rows := indexRows(t, e.Driver, p); len(rows) != len(hybridNotes) {
			t.Fatalf("index rows %v, want one per file", rows)
		}
		_, texts := emb.Counts()
		res := hybridSearch(t, s, p, "which vehicle do I use", "")
		if len(res.Matches) == 0 || res.Matches[0].Path != p+"car.md" {
			t.Fatalf("hybrid (the default with an embedder) = %v, want car.md first", matchPaths(res))
		}
		if _, after := emb.Counts(); after != texts+1 {
			t.Fatalf("a search over a fresh index embedded %d texts, want only the query", after-texts)
		}
		// The index is never a file: not listed, walked, searched, in history.
		eqSlice(t, "listed", list(t, s, "kamal/", 100), []string{p + "car.md", p + "cat.md", p + "garden.md", p + "health.md"})
		var walked []string
		for path, err := range s.Walk(ctx(t), "", 1) {
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, path)
		}
		eqSlice(t, "walked", walked, list(t, s, "", 100))
		for _, m := range []search.Mode{search.Literal, search.BM25, search.Hybrid} {
			for _, mt := range hybridSearch(t, s, p, "format chunks model", m).Matches {
				if strings.Contains(mt.Path, store.ReservedSegmentPrefix) {
					t.Fatalf("%s search returned %s", m, mt.Path)
				}
			}
		}
		h, err := s.History(ctx(t), store.HistoryRequest{Prefix: "kamal/", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range h.Entries {
			if strings.Contains(en.Path, store.ReservedSegmentPrefix) {
				t.Fatalf("history holds %s", en.Path)
			}
		}
		// An unchanged rewrite embeds nothing; a changed file only its chunk.
		f := read(t, s, p+"car.md", 1000)
		calls, _ := emb.Counts()
		write(t, s, p+"car.md", f.Content, f.Version)
		waitIndexed(t, s)
		if c, _ := emb.Counts(); c != calls {
			t.Fatalf("an unchanged rewrite made %d embedding calls", c-calls)
		}
		_, texts = emb.Counts()
		write(t, s, p+"cat.md", "Our feline naps by the window.", read(t, s, p+"cat.md", 100).Version)
		waitIndexed(t, s)
		if _, after := emb.Counts(); after != texts+1 {
			t.Fatalf("a changed one-chunk file embedded %d texts, want 1", after-texts)
		}
	}},
	{"hybrid_repaired_after_external_write", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, false)
		const p = "u/main/"
		for name, c := range hybridNotes {
			if name != "car.md" {
				create(t, s, p+name, c)
			}
		}
		waitIndexed(t, s)
		rawCreate(t, e.Driver, p+"car.md", hybridNotes["car.md"], "ext-1")
		_, texts := emb.Counts()
		res := hybridSearch(t, s, p, "vehicle", search.Hybrid)
		if len(res.Matches) == 0 || res.Matches[0].Path != p+"car.md" {
			t.Fatalf("after an external write = %v, want car.md first", matchPaths(res))
		}
		if _, after := emb.Counts(); after != texts+2 {
			t.Fatalf("the search embedded %d texts, want the query and the new file's chunk", after-texts)
		}
		waitIndexed(t, s) // the search handed its vector to the indexer
		if !slices.Contains(indexRows(t, e.Driver, p), p+search.IndexSegment+"/car.md") {
			t.Fatalf("no index record written back: %v", indexRows(t, e.Driver, p))
		}
		_, texts = emb.Counts()
		hybridSearch(t, s, p, "vehicle", search.Hybrid)
		if _, after := emb.Counts(); after != texts+1 {
			t.Fatalf("a search after the repair embedded %d texts, want only the query", after-texts)
		}
	}},
	{"hybrid_stale_and_foreign_vectors_never_scored", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, false)
		const p = "u/main/"
		// The stale file's name is no word, so that BM25 (which relates
		// "vehicle" to "car") cannot rank it by its name.
		const stale = p + "n1.md"
		for name, c := range hybridNotes {
			if name != "car.md" {
				create(t, s, p+name, c)
			}
		}
		create(t, s, stale, "automobile")
		create(t, s, p+"sedan.md", "The sedan is in the garage.")
		waitIndexed(t, s)
		if res := hybridSearch(t, s, p, "vehicle", search.Hybrid); matchPaths(res)[0] != stale {
			t.Fatalf("before the change: %v, want n1.md first", matchPaths(res))
		}
		// Behind the store's back, n1.md stops being about cars: its
		// record's vector is stale and must not rank it for "vehicle".
		f, err := e.Driver.GetFile(ctx(t), stale)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Driver.ReplaceFile(ctx(t), driver.File{Path: stale, Content: "Bananas are yellow.", Version: "ext-2"}, f.Version); err != nil {
			t.Fatal(err)
		}
		res := hybridSearch(t, s, p, "vehicle", search.Hybrid)
		if len(res.Matches) == 0 || res.Matches[0].Path != p+"sedan.md" {
			t.Fatalf("a stale vector was scored: %v, want sedan.md first", matchPaths(res))
		}
		// Another model's vectors are never used: a store with model
		// fake-2 embeds every chunk it scores itself.
		other := &FakeEmbedder{ModelID: "fake-2"}
		s2 := hybridStore(t, e, other, false)
		hybridSearch(t, s2, p, "vehicle", search.Hybrid)
		if _, texts := other.Counts(); texts != len(hybridNotes)+2 {
			t.Fatalf("model fake-2 embedded %d texts, want every chunk and the query (%d)", texts, len(hybridNotes)+2)
		}
	}},
	{"hybrid_delete_and_forget_erase_vectors", func(t *testing.T, e *Env) {
		s := hybridStore(t, e, &FakeEmbedder{}, false)
		v := create(t, s, "k/a.md", "automobile notes")
		create(t, s, "k/sub/b.md", "kitten notes")
		create(t, s, "other/c.md", "physician notes")
		waitIndexed(t, s)
		eq(t, "index rows", len(indexRows(t, e.Driver, "k/")), 2)
		if _, err := s.Delete(ctx(t), store.DeleteRequest{Path: "k/a.md", Expected: v}); err != nil {
			t.Fatal(err)
		}
		waitIndexed(t, s)
		eqSlice(t, "index rows after delete", indexRows(t, e.Driver, "k/"), []string{"k/sub/" + search.IndexSegment + "/b.md"})
		// A file removed behind the store's back leaves its record: forget erases it.
		f, _ := e.Driver.GetFile(ctx(t), "k/sub/b.md")
		if err := e.Driver.DeleteFile(ctx(t), "k/sub/b.md", f.Version); err != nil {
			t.Fatal(err)
		}
		n, err := s.ForgetIndex(ctx(t), "k/")
		if err != nil || n != 1 {
			t.Fatalf("ForgetIndex = %d, %v; want 1 row", n, err)
		}
		eqSlice(t, "index rows after forget", indexRows(t, e.Driver, "k/"), nil)
		eq(t, "other tenant's rows", len(indexRows(t, e.Driver, "other/")), 1)
		mustErr(t, func() error { _, err := s.ForgetIndex(ctx(t), ""); return err }(), store.ErrInvalidPath, "forget the root")
	}},
	{"hybrid_tenant_boundary", func(t *testing.T, e *Env) {
		s := hybridStore(t, e, &FakeEmbedder{}, false)
		create(t, s, "tenant-a/main/a.md", "the sedan needs new tyres")
		create(t, s, "tenant-b/main/b.md", "automobile automobile vehicle car")
		create(t, s, "tenant-a/main/sub/c.md", "car car car")
		waitIndexed(t, s)
		res := hybridSearch(t, s, "tenant-a/main/", "car", search.Hybrid)
		// A folder of one file: found by meaning alone, it is related,
		// not a match; either way, only the tenant's own file.
		res.Matches = append(res.Matches, res.Related...)
		eqSlice(t, "tenant-a matches and related", matchPaths(res), []string{"tenant-a/main/a.md"})
	}},
	{"hybrid_bounds_hold", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, false)
		const p = "b/"
		for i := range search.MaxSearchEmbeds + 16 {
			rawCreate(t, e.Driver, fmt.Sprintf("%sn%03d.md", p, i), fmt.Sprintf("note %d about the automobile and other things", i), fmt.Sprintf("ext-%d", i))
		}
		res := mustSearch(t, s, search.Request{Prefix: p, Query: "vehicle", Mode: search.Hybrid, Limit: 7, MaxFiles: 1000, MaxChars: 300, MaxFileChars: 1000})
		if _, texts := emb.Counts(); texts > search.MaxSearchEmbeds+1 {
			t.Fatalf("one search embedded %d texts, over %d chunks and the query", texts, search.MaxSearchEmbeds)
		}
		if len(res.Matches) > 7 || budgetUsed(p, res) > 300 || res.Scanned != search.MaxSearchEmbeds+16 {
			t.Fatalf("bounds: %d matches, %d chars, %d scanned", len(res.Matches), budgetUsed(p, res), res.Scanned)
		}
		// A folder past MaxFiles: its term index covers it whole, and once
		// its vector cache is built the files closest in meaning join the
		// candidates (at most MaxFiles of them are read; cut to MaxFileChars,
		// their vectors are the cut ends', never scored).
		req := search.Request{Prefix: p, Query: "vehicle", Mode: search.Hybrid, Limit: 5, MaxFiles: 10, MaxChars: 4000, MaxFileChars: 10}
		mustSearch(t, s, req)
		waitIndexed(t, s)
		res = mustSearch(t, s, req)
		if res.Scanned != search.MaxSearchEmbeds+16 || !res.Truncated || res.Fallback != "" {
			t.Fatalf("max files/chars: %d matches and %d related, scanned %d, truncated %v, fallback %q", len(res.Matches), len(res.Related), res.Scanned, res.Truncated, res.Fallback)
		}
		for _, m := range res.Matches {
			if len([]rune(m.Snippet)) > 10 {
				t.Fatalf("snippet %q over the per-file bound", m.Snippet)
			}
		}
	}},
	{"hybrid_embedder_down_gives_bm25", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		emb.SetDown(true)
		s := hybridStore(t, e, emb, false)
		const p = "d/"
		for name, c := range hybridNotes {
			create(t, s, p+name, c)
		}
		write(t, s, p+"cars.md", "car car", "")
		waitIndexed(t, s)
		eq(t, "index rows while down", len(indexRows(t, e.Driver, p)), 0)
		got := hybridSearch(t, s, p, "car tomatoes", search.Hybrid)
		want := hybridSearch(t, s, p, "car tomatoes", search.BM25)
		if len(got.Matches) == 0 || !slices.Equal(matchPaths(got), matchPaths(want)) {
			t.Fatalf("embedder down: %v, want the BM25 result %v", matchPaths(got), matchPaths(want))
		}
		for name, c := range hybridNotes {
			eq(t, name, read(t, s, p+name, 1000).Content, c)
		}
		emb.SetDown(false)
		res := hybridSearch(t, s, p, "vehicle", search.Hybrid)
		if len(res.Matches) == 0 || res.Matches[0].Path != p+"car.md" && res.Matches[0].Path != p+"cars.md" {
			t.Fatalf("embedder back: %v", matchPaths(res))
		}
	}},
	{"hybrid_exactly_once_untouched", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, false)
		op := &store.Operation{ID: "op-hybrid-1", Fingerprint: "fp"}
		m1, err := s.Write(ctx(t), store.WriteRequest{Path: "x/a.md", Content: "automobile", Operation: op})
		if err != nil {
			t.Fatal(err)
		}
		waitIndexed(t, s)
		m2, err := s.Write(ctx(t), store.WriteRequest{Path: "x/a.md", Content: "automobile", Operation: op})
		if err != nil || !m2.Replayed || m2.Version != m1.Version {
			t.Fatalf("replay = %+v, %v; want Replayed with version %s", m2, err, m1.Version)
		}
		got, err := s.GetOperation(ctx(t), *op)
		if err != nil || got == nil || got.Version != m1.Version {
			t.Fatalf("GetOperation = %+v, %v", got, err)
		}
		d, err := s.Delete(ctx(t), store.DeleteRequest{Path: "x/a.md", Expected: m1.Version, Operation: &store.Operation{ID: "op-hybrid-2", Fingerprint: "fp"}})
		if err != nil {
			t.Fatal(err)
		}
		waitIndexed(t, s)
		d2, err := s.Delete(ctx(t), store.DeleteRequest{Path: "x/a.md", Expected: m1.Version, Operation: &store.Operation{ID: "op-hybrid-2", Fingerprint: "fp"}})
		if err != nil || !d2.Replayed || d2.Existed != d.Existed {
			t.Fatalf("delete replay = %+v, %v", d2, err)
		}
		eq(t, "index rows", len(indexRows(t, e.Driver, "x/")), 0)
	}},
	{"hybrid_concurrent_writers", func(t *testing.T, e *Env) {
		emb := &FakeEmbedder{}
		s := hybridStore(t, e, emb, false)
		s2 := hybridStore(t, e, emb, false) // another process, same index
		const p = "c/"
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				st := []*store.Store{s, s2}[w%2]
				for i := range 3 {
					for {
						cur := read(t, st, p+"shared.md", 100)
						ver := ""
						if cur != nil {
							ver = cur.Version
						}
						_, err := st.Write(ctx(t), store.WriteRequest{Path: p + "shared.md", Content: fmt.Sprintf("writer %d round %d", w, i), Expected: ver})
						if err == nil {
							break
						}
						if !isConflict(err) {
							t.Error(err)
							return
						}
					}
				}
				create(t, st, fmt.Sprintf("%sown-%d.md", p, w), "kitten "+strings.Repeat("x", w))
			})
		}
		wg.Wait()
		write(t, s, p+"shared.md", "the automobile is parked", read(t, s, p+"shared.md", 100).Version)
		waitIndexed(t, s)
		waitIndexed(t, s2)
		_, texts := emb.Counts()
		res := hybridSearch(t, s, p, "vehicle", search.Hybrid)
		if len(res.Matches) == 0 || res.Matches[0].Path != p+"shared.md" {
			t.Fatalf("after concurrent writers: %v", matchPaths(res))
		}
		if _, after := emb.Counts(); after != texts+1 {
			t.Fatalf("the index lagged: the search embedded %d texts, want only the query", after-texts)
		}
	}},
}

// cosine is the cosine similarity of a and b (0 when either is zero).
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
