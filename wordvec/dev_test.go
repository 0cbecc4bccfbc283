package wordvec

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestDevRecall measures the vectors alone on a retrieval set in the shape of
// the repository's shared dev.json (notes and queries whose note is known):
//
//	WORDVEC_DEV_JSON=/work/shared/retrieval/dev.json go test -run TestDevRecall -v
//
// WORDVEC_TABLE names another table file (from internal/gen) to compare. It
// is a measurement, not a check: the set is not part of this module.
func TestDevRecall(t *testing.T) {
	path := os.Getenv("WORDVEC_DEV_JSON")
	if path == "" {
		t.Skip("set WORDVEC_DEV_JSON to a retrieval set to measure recall")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Files   map[string]string `json:"files"`
		Queries []struct{ Q, Want, Kind string }
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	tbl, err := loadTable()
	if other := os.Getenv("WORDVEC_TABLE"); other != "" {
		data, rerr := os.ReadFile(other)
		if rerr != nil {
			t.Fatal(rerr)
		}
		tbl, err = parseTable(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	var tokensSeen, unknown int
	var scratch []byte
	for _, text := range append(mapValues(set.Files), queryTexts(set.Queries)...) {
		tokens(text, nil, func(w []byte) {
			tokensSeen++
			if tbl.lookup(w, &scratch) < 0 {
				unknown++
			}
		})
	}
	fmt.Printf("%d words: %d of %d tokens unknown\n", tbl.n, unknown, tokensSeen)
	names := make([]string, 0, len(set.Files))
	for n := range set.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, w := range []struct {
		name     string
		sif      bool
		withName bool
	}{{"sif", true, false}, {"uniform", false, false}, {"sif+name", true, true}, {"uniform+name", false, true}} {
		e := &Embedder{t: tbl, sif: w.sif}
		docs := make([]string, len(names))
		for i, n := range names {
			docs[i] = set.Files[n]
			if w.withName {
				docs[i] = strings.TrimSuffix(n, ".md") + "\n" + docs[i]
			}
		}
		dv, err := e.Embed(t.Context(), docs)
		if err != nil {
			t.Fatal(err)
		}
		type tally struct {
			n, r1, r3 int
			mrr       float64
		}
		by := map[string]*tally{"all": {}}
		for _, q := range set.Queries {
			qv, _ := e.Embed(t.Context(), []string{q.Q})
			want := sort.SearchStrings(names, q.Want)
			s := dot(qv[0], dv[want])
			rank := 1
			for i := range names {
				if i != want && dot(qv[0], dv[i]) > s {
					rank++
				}
			}
			for _, k := range []string{"all", q.Kind} {
				if by[k] == nil {
					by[k] = &tally{}
				}
				b := by[k]
				b.n++
				b.mrr += 1 / float64(rank)
				if rank == 1 {
					b.r1++
				}
				if rank <= 3 {
					b.r3++
				}
			}
		}
		kinds := make([]string, 0, len(by))
		for k := range by {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			b := by[k]
			fmt.Printf("%d words %-13s %-11s n=%2d recall@1 %.3f recall@3 %.3f MRR %.3f\n", tbl.n, w.name, k, b.n,
				float64(b.r1)/float64(b.n), float64(b.r3)/float64(b.n), b.mrr/float64(b.n))
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func queryTexts(qs []struct{ Q, Want, Kind string }) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Q)
	}
	return out
}
