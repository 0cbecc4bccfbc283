package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem/core/driver"
)

// versionAt returns a version whose time is at (ulid.New is monotonic
// per process, so it cannot make an older version after a newer one).
func versionAt(at time.Time, n int) string {
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	ms := uint64(at.UnixMilli())
	var b [10]byte
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	return string(b[:]) + fmt.Sprintf("%016d", n)
}

func TestRecencyFactor(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := 24 * time.Hour
	for _, c := range []struct {
		name    string
		written time.Time
		ok      bool
		want    float64
	}{
		{"written now", now, true, 1},
		{"one half-life ago", now.Add(-h), true, 1 - RecencyWeight/2},
		{"two half-lives ago", now.Add(-2 * h), true, 1 - 3*RecencyWeight/4},
		{"long ago", now.Add(-1000 * h), true, 1 - RecencyWeight},
		{"in the future: as now", now.Add(time.Hour), true, 1},
		{"no time: as now", time.Time{}, false, 1},
	} {
		if got := recencyFactor(c.written, c.ok, now, h); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: factor %v, want %v", c.name, got, c.want)
		}
	}
	old, fresh := now.Add(-h), now.Add(-time.Minute)
	if recencyFactor(old, true, now, h) >= recencyFactor(fresh, true, now, h) {
		t.Error("an older write is not weighed less")
	}
	if recencyFactor(old, true, now, h) >= recencyFactor(old, true, now, 10*h) {
		t.Error("a shorter half-life does not weigh an old write less")
	}
	// A version's time; a fence's is the write it carries; a hand edit's
	// (a file store's "ext-…") has none.
	v := versionAt(old, 1)
	if got, ok := VersionTime(v + "~op1"); !ok || !got.Equal(old) {
		t.Errorf("VersionTime(%q) = %v, %v; want %v", v, got, ok, old)
	}
	if got, ok := VersionTime(versionAt(now, 2) + "+" + v); !ok || !got.Equal(old) {
		t.Errorf("a fence's writeTime = %v, %v; want the carried write's %v", got, ok, old)
	}
	if _, ok := VersionTime("ext-0123456789abcdef"); ok {
		t.Error("a hand edit's version has a time")
	}
}

// recencyCorpus is a folder of notes written at various times before now
// (the i-th note 0–60 days old, by a fixed seed), two of them with the
// same content, the older sorted first by path, and one dated after now.
func recencyCorpus(t *testing.T, opts *Options, now time.Time) *testStore {
	t.Helper()
	d := &nnDriver{rows: map[string]driver.File{}}
	words := strings.Fields("heron river cat city trains flights lisbon porto garden tomatoes basil sofa kitten office coffee beans bike dentist")
	rng := rand.New(rand.NewPCG(3, 9))
	for i := range 40 {
		var b strings.Builder
		for range 4 + rng.IntN(12) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		age := time.Duration(rng.IntN(60*24)) * time.Hour
		d.rows[fmt.Sprintf("u/main/n%02d.md", i)] = driver.File{Path: fmt.Sprintf("u/main/n%02d.md", i), Content: b.String(), Version: versionAt(now.Add(-age), i)}
	}
	same := "- Heron nests by the river mouth.\n"
	d.rows["u/main/a-old.md"] = driver.File{Path: "u/main/a-old.md", Content: same, Version: versionAt(now.Add(-30*24*time.Hour), 100)}
	d.rows["u/main/b-new.md"] = driver.File{Path: "u/main/b-new.md", Content: same, Version: versionAt(now.Add(-time.Hour), 101)}
	d.rows["u/main/c-future.md"] = driver.File{Path: "u/main/c-future.md", Content: same, Version: versionAt(now.Add(48*time.Hour), 102)}
	o := Options{Now: func() time.Time { return now }}
	if opts != nil {
		o.Embedder = opts.Embedder
	}
	s := newTestStore(d, &o)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestRecencyReordersOnly: on BM25, literal and hybrid search, with
// bounds that return every match, the matches with recency on are those
// with it off (and the related files too), ordered by their scores scaled
// by their files' recency factors; among equal scores the newest comes
// first (a version dated after now counts as now); off (the default) is
// today's ranking, which orders equal scores by path.
func TestRecencyReordersOnly(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, mode := range []Mode{BM25, Literal, Hybrid} {
		t.Run(string(mode), func(t *testing.T) {
			var opts *Options
			if mode == Hybrid {
				opts = &Options{Embedder: nnEmbedder{}}
			}
			s := recencyCorpus(t, opts, now)
			reordered := 0
			for _, q := range []string{"heron river", "cat", "trains to porto", "coffee beans bike", "kitten sofa garden"} {
				r := Request{Prefix: "u/main/", Query: q, Mode: mode, Limit: 100, MaxFiles: 100, MaxChars: 100_000, MaxFileChars: 5000}
				off, err := s.Search(t.Context(), r)
				if err != nil {
					t.Fatal(err)
				}
				r.RecencyHalfLife = 7 * 24 * time.Hour
				on, err := s.Search(t.Context(), r)
				if err != nil {
					t.Fatal(err)
				}
				if len(off.Matches) == 0 {
					t.Fatalf("%q: no match", q)
				}
				byPath := func(ms []Match) []string {
					var ps []string
					for _, m := range ms {
						ps = append(ps, m.Path)
					}
					return ps
				}
				offPaths, onPaths := byPath(off.Matches), byPath(on.Matches)
				if !slices.Equal(offPaths, onPaths) {
					reordered++
				}
				slices.Sort(offPaths)
				slices.Sort(onPaths)
				if !slices.Equal(offPaths, onPaths) || len(off.Related) != len(on.Related) {
					t.Fatalf("%q: matches with recency off %v, on %v: not the same set", q, offPaths, onPaths)
				}
				// Each score is the one without recency, scaled by its factor.
				offScore := map[string]float64{}
				for _, m := range off.Matches {
					offScore[m.Path] = m.Score
				}
				for i, m := range on.Matches {
					tm, ok := VersionTime(s.d.(*nnDriver).rows[m.Path].Version)
					want := math.Round(offScore[m.Path]*recencyFactor(tm, ok, now, r.RecencyHalfLife)*1e6) / 1e6
					if math.Abs(m.Score-want) > 1e-9 || m.Score > offScore[m.Path] {
						t.Fatalf("%q: %s scores %v with recency, want %v (%v without)", q, m.Path, m.Score, want, offScore[m.Path])
					}
					if i > 0 && (on.Matches[i-1].Score < m.Score || on.Matches[i-1].Score == m.Score && on.Matches[i-1].Path > m.Path) {
						t.Fatalf("%q: not sorted by score, then path: %+v", q, on.Matches)
					}
				}
				if q == "heron river" {
					rank := func(ps []string, p string) int { return slices.Index(ps, "u/main/"+p) }
					o, n := byPath(off.Matches), byPath(on.Matches)
					if rank(o, "a-old.md") > rank(o, "b-new.md") || rank(o, "b-new.md") > rank(o, "c-future.md") {
						t.Errorf("off: equal scores not by path: %v", o)
					}
					// The future file counts as written now: above the
					// hour-old one, whose factor is just below 1. (Hybrid
					// fuses ranks, so equal files there score a little
					// apart, by path: only the month-old one falls.)
					newest := rank(n, "c-future.md") < rank(n, "b-new.md") || mode == Hybrid
					if !newest || rank(n, "a-old.md") < max(rank(n, "b-new.md"), rank(n, "c-future.md")) {
						t.Errorf("on: equal files not newest first: %v", n)
					}
				}
			}
			if reordered == 0 {
				t.Fatal("recency reordered no query's matches")
			}
		})
	}
}

// TestRecencyOffIsToday: a request without a half-life ranks exactly as
// scoring every file did before recency existed (rank, which never
// weighs it), scores included.
func TestRecencyOffIsToday(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := recencyCorpus(t, nil, now)
	for _, mode := range []Mode{BM25, Literal} {
		for _, q := range []string{"heron river", "cat", "coffee beans bike"} {
			r := Request{Prefix: "u/main/", Query: q, Mode: mode, Limit: 10, MaxFiles: 100, MaxChars: 2000, MaxFileChars: 5000}
			got, err := s.Search(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			cands, _, err := s.candidates(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			want := rank(&s.cache, r, Fields(strings.ToLower(q)), cands)
			if !reflect.DeepEqual(got.Matches, want.Matches) {
				t.Fatalf("%s %q without a half-life:\n%+v\nwant\n%+v", mode, q, got.Matches, want.Matches)
			}
		}
	}
}

// TestRecencyNeverLiftsAWeakMatch: a file whose score is more than
// 1/(1-RecencyWeight) times another's stays above it, however old it is
// and however new the other.
func TestRecencyNeverLiftsAWeakMatch(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := &nnDriver{rows: map[string]driver.File{
		"u/main/strong.md": {Path: "u/main/strong.md", Content: "heron heron heron river", Version: versionAt(now.AddDate(-5, 0, 0), 1)},
		"u/main/weak.md":   {Path: "u/main/weak.md", Content: "a heron once, and then many other words about something else entirely", Version: versionAt(now, 2)},
	}}
	s := newTestStore(d, &Options{Now: func() time.Time { return now }})
	defer s.Close()
	r := Request{Prefix: "u/main/", Query: "heron", Mode: BM25, Limit: 10, MaxFiles: 10, MaxChars: 2000, MaxFileChars: 5000, RecencyHalfLife: time.Hour}
	res, err := s.Search(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 2 || res.Matches[0].Path != "u/main/strong.md" {
		t.Fatalf("matches %+v, want strong.md first", res.Matches)
	}
	r.RecencyHalfLife = 0
	off, err := s.Search(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if off.Matches[0].Score*(1-RecencyWeight) <= off.Matches[1].Score {
		t.Fatalf("the corpus does not separate the two by more than the weight: %+v", off.Matches)
	}
}

// TestRecencyRecursive: a recursive search weighs each folder's matches
// before merging them, so an equal file written later in another folder
// comes first.
func TestRecencyRecursive(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := &nnDriver{rows: map[string]driver.File{
		"u/a/note.md": {Path: "u/a/note.md", Content: "heron river", Version: versionAt(now.AddDate(0, -1, 0), 1)},
		"u/b/note.md": {Path: "u/b/note.md", Content: "heron river", Version: versionAt(now.Add(-time.Hour), 2)},
	}}
	s := newTestStore(d, &Options{Now: func() time.Time { return now }})
	defer s.Close()
	r := Request{Prefix: "u/", Query: "heron", Mode: BM25, Limit: 10, MaxFiles: 10, MaxChars: 2000, MaxFileChars: 5000, Recursive: true}
	for _, c := range []struct {
		halfLife time.Duration
		first    string
	}{{0, "u/a/note.md"}, {7 * 24 * time.Hour, "u/b/note.md"}} {
		r.RecencyHalfLife = c.halfLife
		res, err := s.Search(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 2 || res.Matches[0].Path != c.first {
			t.Fatalf("half-life %s: %+v, want 2 matches, %s first", c.halfLife, res.Matches, c.first)
		}
	}
}

// TestRecencyReachesPastTheIndexPool: a search answered by the term index
// reads every file recency could lift into the top Limit, not only the
// Limit+8 that words rank best: twelve notes alike, the newest named last,
// and Limit 1.
func TestRecencyReachesPastTheIndexPool(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := &nnDriver{rows: map[string]driver.File{}}
	for i := range 12 {
		at := now.AddDate(0, 0, -30)
		if i == 11 {
			at = now.Add(-time.Hour)
		}
		p := fmt.Sprintf("u/main/n%02d.md", i)
		d.rows[p] = driver.File{Path: p, Content: "heron river", Version: versionAt(at, i)}
	}
	s := newTestStore(d, &Options{Now: func() time.Time { return now }})
	defer s.Close()
	r := Request{Prefix: "u/main/", Query: "heron", Mode: BM25, Limit: 1, MaxFiles: 100, MaxChars: 2000, MaxFileChars: 5000, RecencyHalfLife: 7 * 24 * time.Hour}
	for range 2 { // the first search builds the index in place, the second answers from it
		res, err := s.Search(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Fallback != "" || len(res.Matches) != 1 || res.Matches[0].Path != "u/main/n11.md" {
			t.Fatalf("matches %+v (fallback %q), want the newest, n11.md", res.Matches, res.Fallback)
		}
	}
}

// cutUnversioned is a driver whose scope read, as a file store's does,
// returns no version for a file it cut.
type cutUnversioned struct{ *nnDriver }

func (d cutUnversioned) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	files, err := d.nnDriver.ReadScope(ctx, p)
	for i := range files {
		if files[i].Truncated {
			files[i].Version = ""
		}
	}
	return files, err
}

// TestRecencyReadsTheVersionsAReadLeftOut: a file cut at MaxFileChars by a
// scope read that leaves out its version is weighed by its own version,
// read once for the search, not as written now.
func TestRecencyReadsTheVersionsAReadLeftOut(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	long := "heron river " + strings.Repeat("x", 200)
	d := cutUnversioned{&nnDriver{rows: map[string]driver.File{
		"u/main/a-old.md": {Path: "u/main/a-old.md", Content: long, Version: versionAt(now.AddDate(0, 0, -60), 1)},
		"u/main/b-new.md": {Path: "u/main/b-new.md", Content: long, Version: versionAt(now.Add(-time.Hour), 2)},
	}}}
	s := newTestStore(d, &Options{Now: func() time.Time { return now }})
	defer s.Close()
	for _, mode := range []Mode{Literal, BM25} {
		r := Request{Prefix: "u/main/", Query: "heron", Mode: mode, Limit: 5, MaxFiles: 10, MaxChars: 2000, MaxFileChars: 40, RecencyHalfLife: 7 * 24 * time.Hour}
		res, err := s.Search(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 2 || res.Matches[0].Path != "u/main/b-new.md" || res.Matches[0].Score <= res.Matches[1].Score {
			t.Fatalf("%s: matches %+v, want b-new.md above a-old.md", mode, res.Matches)
		}
	}
}
