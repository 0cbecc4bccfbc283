package search

import (
	"container/list"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/internal/chunk"
	"github.com/agentmem/agentmem/core/internal/lexis"
)

func TestAnalysisCacheBudget(t *testing.T) {
	var c analysisCache
	big := strings.Repeat("x", 1<<20)
	for i := range 100 {
		c.tick() // each entry by its own search: plain LRU order
		c.put(fmt.Sprint("k", i), big+fmt.Sprint(i), i, 0)
		if c.used > analysisBudget {
			t.Fatalf("after %d entries the cache holds %d bytes, over its budget of %d", i+1, c.used, analysisBudget)
		}
	}
	if got := c.get("k99", big+"99"); got != 99 {
		t.Errorf("the newest entry = %v, want 99", got)
	}
	if got := c.get("k0", big+"0"); got != nil {
		t.Errorf("the oldest entry survived eviction: %v", got)
	}
	if len(c.items) != c.order.Len() {
		t.Errorf("%d keys for %d entries", len(c.items), c.order.Len())
	}
	c.put("huge", strings.Repeat("y", analysisBudget/4), "v", 0)
	if got := c.get("huge", strings.Repeat("y", analysisBudget/4)); got != nil {
		t.Errorf("an entry over a quarter of the budget was kept")
	}
}

// TestAnalysisCacheResistsScans: searches that read a scope larger than
// the budget, again and again, keep finding most of it cached (plain LRU
// would evict each entry just before the next search reads it and miss
// every time), and a scope no longer searched gives way to another.
func TestAnalysisCacheResistsScans(t *testing.T) {
	var c analysisCache
	big := strings.Repeat("x", 1<<20)
	scan := func(scope string, n int) (hits int) {
		c.tick()
		for i := range n {
			k := fmt.Sprint(scope, i)
			if c.get(k, big+k) != nil {
				hits++
			} else {
				c.put(k, big+k, i, 0)
			}
			if c.used > analysisBudget {
				t.Fatalf("the cache holds %d bytes, over its budget of %d", c.used, analysisBudget)
			}
		}
		return hits
	}
	const files = 40 // about 31 fit
	scan("a", files)
	for round := range 4 {
		if hits := scan("a", files); hits < files*2/3 {
			t.Errorf("scan %d of a scope larger than the budget: %d of %d files cached, want most", round+2, hits, files)
		}
	}
	scan("b", 10) // a's entries were used by the search before: b is not kept yet
	scan("b", 10) // now they are two searches old and give way
	if hits := scan("b", 10); hits != 10 {
		t.Errorf("a new scope after an old one: %d of 10 cached, want all", hits)
	}
	if len(c.items) != c.order.Len() {
		t.Errorf("%d keys for %d entries", len(c.items), c.order.Len())
	}
}

func TestAnalysisCacheExactContent(t *testing.T) {
	var c analysisCache
	c.put("k", "café", 1, 0)
	for _, other := range []string{"cafe", "café ", "", "caf"} {
		if got := c.get("k", other); got != nil {
			t.Errorf("get(%q) = %v: the analysis of other content was used", other, got)
		}
	}
	if got := c.get("k", "café"); got != 1 {
		t.Errorf("get(same content) = %v, want 1", got)
	}
	c.put("k", "new", 2, 0)
	if got := c.get("k", "café"); got != nil {
		t.Errorf("a replaced entry still answers: %v", got)
	}
	var nilCache *analysisCache
	nilCache.put("k", "v", 1, 0)
	if got := nilCache.get("k", "v"); got != nil {
		t.Errorf("a nil cache answered %v", got)
	}
}

// TestLookupAll: looking terms up all at once gives each term's
// positions, as a lookup of each does, whichever way it goes (a merge for
// bodies of few distinct terms, a binary search per term for longer
// ones), with repeated, absent, first and last terms.
func TestLookupAll(t *testing.T) {
	sc := lexis.NewScanner()
	r := rand.New(rand.NewPCG(3, 4))
	for _, words := range []int{0, 1, 3, 12, 40, 400, 3000} {
		var b strings.Builder
		for range words {
			fmt.Fprintf(&b, "w%d ", r.IntN(words+1))
		}
		body := analyze(sc, b.String())
		for _, nq := range []int{1, 2, 5, 25, 200} {
			ts := []string{"", "a", "w0", "zzz"}
			for range nq {
				ts = append(ts, fmt.Sprintf("w%d", r.IntN(2*words+2)))
			}
			slices.Sort(ts)
			got := make([][]uint32, len(ts))
			body.lookupAll(ts, got)
			for k, term := range ts {
				if want := body.positions(term); !slices.Equal(got[k], want) || (want == nil) != (got[k] == nil) {
					t.Fatalf("%d words, %d terms: %q: got %v, want %v", words, nq, term, got[k], want)
				}
			}
		}
	}
}

// TestChunkSpansFollowContent: the chunk spans kept apart from the
// analysis cache are those of the content asked about, whatever content
// of the same path and length was split before.
func TestChunkSpansFollowContent(t *testing.T) {
	var c analysisCache
	one := "# Plans\n\nFly to Lisbon in May.\n\n# Work\n\nThe review is on Friday."
	two := "# Plans\n\nSail to Lisbon in May.\n\n# Work\nThe review is on Friday."
	if len(one) != len(two) {
		t.Fatalf("the two contents must be as long: %d, %d", len(one), len(two))
	}
	for _, content := range []string{one, two, one} {
		want := chunk.Split("a.md", content)
		for i := range want {
			want[i].Text = ""
		}
		for range 2 { // split, then from the span cache
			got := c.chunksOf("u/a.md", content)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks of %q:\n%+v\nwant\n%+v", content, got, want)
			}
			c.items, c.order, c.used = nil, list.List{}, 0 // the analysis entry evicted
		}
	}
}
