// Package lexis turns text into search terms: the words of package
// core/text (Unicode-aware, lower case, Latin diacritics folded, each Han,
// Hiragana and Katakana character a word of its own, apostrophes kept
// inside a word), English possessives and apostrophes dropped, and a
// Porter stemmer for ASCII words.
//
// The same function serves documents and queries, so a term of one always
// compares equal to the same word of the other.
package lexis

import (
	"bytes"

	"github.com/agentmem/agentmem/core/text"
)

// Token is one term of a text and where its word is, in runes.
type Token struct {
	// Term is the normalised, stemmed word.
	Term string
	// Start and End are rune offsets of the word in the text: [Start, End).
	Start, End int
}

// Scanner turns words into terms, caching each word's stem (at most
// [MaxStems] of them): searches stem the same few thousand words again and
// again. It also caches the related terms of the query words it was asked
// about ([Scanner.Related]). A Scanner is not safe for concurrent use.
type Scanner struct {
	stems   map[string]string
	related map[string][]string // word → relatedTerms(word)
	words   text.Tokenizer
}

// MaxStems bounds the stems a Scanner keeps; past it the cache starts
// over.
const MaxStems = 1 << 16

// NewScanner returns an empty Scanner.
func NewScanner() *Scanner {
	return &Scanner{stems: map[string]string{}, words: text.Tokenizer{Ideographs: true, Apostrophes: true}}
}

// Each calls fn for every term of s, in order, with its rune offsets.
func (sc *Scanner) Each(s string, fn func(term string, start, end int)) {
	sc.words.Each(s, func(w text.Word) {
		if t := sc.term(w.Folded); t != "" {
			fn(t, w.RuneStart, w.RuneEnd)
		}
	})
}

// Words returns the words of s in order, lower case, folded, without
// possessives or apostrophes ("Joana's" → "joana", "don't" → "dont"),
// each with its term.
func (sc *Scanner) Words(s string) (words, terms []string) {
	sc.words.Each(s, func(fw text.Word) {
		w := string(fw.Folded) // most words have no apostrophe to clean
		if bytes.IndexByte(fw.Folded, '\'') >= 0 {
			w = string(clean(fw.Folded))
		}
		if t := sc.term(fw.Folded); t != "" {
			words, terms = append(words, w), append(terms, t)
		}
	})
	return words, terms
}

// Tokens returns the terms of s with their offsets.
func (sc *Scanner) Tokens(s string) []Token {
	var out []Token
	sc.Each(s, func(t string, start, end int) { out = append(out, Token{t, start, end}) })
	return out
}

// Terms returns the distinct terms of s in first-seen order.
func (sc *Scanner) Terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	sc.Each(s, func(t string, _, _ int) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// term normalises and stems word, a word as text.Tokenizer folds it.
func (sc *Scanner) term(word []byte) string {
	if t, ok := sc.stems[string(word)]; ok {
		return t
	}
	key := string(word)
	t := string(Stem(clean(word)))
	if len(sc.stems) >= MaxStems {
		clear(sc.stems)
	}
	sc.stems[key] = t
	return t
}

// clean returns a copy of word without an English possessive or
// apostrophes: "dog's" → "dog", "don't" → "dont".
func clean(w []byte) []byte {
	if n := len(w); n > 2 && w[n-2] == '\'' && w[n-1] == 's' {
		w = w[:n-2]
	}
	out := make([]byte, 0, len(w))
	for _, b := range w {
		if b != '\'' {
			out = append(out, b)
		}
	}
	return out
}
