package wordvec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Core's related-words table (core/internal/lexis/related.txt.gz), which
// its BM25 ranking adds to a query at a fraction of a word's weight, is
// made from this module's table: for each word of letters a–z among the
// 30,000 most frequent (past the 250 most frequent), its nearest such
// words as ExpandQuery finds them, but up to relatedPerWord and down to
// relatedMinCosine. Rewrite it with
//
//	go test -run TestRelatedTable -update .
//
// Without -update, TestRelatedTable checks the committed table against
// this module's table: the digest in its first line and a sample of its
// lines, recomputed.
var update = flag.Bool("update", false, "rewrite core/internal/lexis/related.txt.gz from table.bin")

const (
	relatedPath    = "../core/internal/lexis/related.txt.gz"
	relatedPerWord = 8
	// relatedMinCosine is lower than ExpandQuery's bound: a related word
	// weighs 0.3 of a query word in BM25 and never more than its IDF, so a
	// farther neighbour costs little and finds notes in other words.
	relatedMinCosine = 0.50
	// relatedSample is every how many ranks the check recomputes.
	relatedSample = 1499
)

// relatedHeader is the table's first line: what it was made from.
func relatedHeader() string {
	return fmt.Sprintf("# related words: up to %d per word, cosine >= %.2f, ranks %d-%d of wordvec's table sha256:%s; made by wordvec's TestRelatedTable, do not edit",
		relatedPerWord, relatedMinCosine, expandSkip, expandVocabulary, tableSHA256)
}

// letters reports whether w is two or more letters a–z.
func letters(w []byte) bool {
	if len(w) < 2 {
		return false
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// relatedLine returns the table's line for the word of rank i ("word\tn1
// n2 …"), or "" when it has no neighbour or is not a word of letters.
func relatedLine(tb *table, i int, nv []float32, ok []bool) string {
	if !ok[i] {
		return ""
	}
	ws := nearest(tb, i, nv, relatedPerWord, relatedMinCosine, func(j int) bool { return ok[j] })
	if len(ws) == 0 {
		return ""
	}
	return string(tb.word(i)) + "\t" + strings.Join(ws, " ")
}

func TestRelatedTable(t *testing.T) {
	tb, err := loadTable()
	if err != nil {
		t.Fatal(err)
	}
	nv := tb.exp.norms(tb)
	ok := make([]bool, len(nv))
	for i := expandSkip; i < len(nv); i++ {
		ok[i] = letters(tb.word(i))
	}
	if *update {
		writeRelated(t, tb, nv, ok)
		return
	}
	raw, err := os.ReadFile(relatedPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: this module is not inside the agentmem repository", relatedPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s is no gzip file (%v): regenerate it: go test -run TestRelatedTable -update .", relatedPath, err)
	}
	lines := map[string]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<16)
	first := true
	for sc.Scan() {
		if first {
			if got, want := sc.Text(), relatedHeader(); got != want {
				t.Fatalf("%s was made from another table or with other bounds:\n got %s\nwant %s\n(regenerate it: go test -run TestRelatedTable -update .)", relatedPath, got, want)
			}
			first = false
			continue
		}
		w, _, _ := strings.Cut(sc.Text(), "\t")
		lines[w] = sc.Text()
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s is damaged (%v): regenerate it: go test -run TestRelatedTable -update .", relatedPath, err)
	}
	if first {
		t.Fatalf("%s is empty: regenerate it: go test -run TestRelatedTable -update .", relatedPath)
	}
	if len(lines) < 10000 {
		t.Fatalf("%s has %d words, want more than 10,000", relatedPath, len(lines))
	}
	for i := expandSkip; i < len(nv); i += relatedSample {
		w := string(tb.word(i))
		if got, want := lines[w], relatedLine(tb, i, nv, ok); got != want {
			t.Errorf("%s, word %q: got %q, want %q (regenerate it: go test -run TestRelatedTable -update .)", relatedPath, w, got, want)
		}
	}
}

// writeRelated writes the table: the header, then one line per word with
// neighbours, sorted by word, gzip-compressed without a name or time.
func writeRelated(t *testing.T, tb *table, nv []float32, ok []bool) {
	out := make([]string, len(nv))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range next {
				out[i] = relatedLine(tb, i, nv, ok)
			}
		})
	}
	for i := expandSkip; i < len(nv); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(zw, relatedHeader())
	for _, l := range out {
		fmt.Fprintln(zw, l)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(relatedPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d words, %d bytes", relatedPath, len(out), buf.Len())
}
