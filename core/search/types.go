// What a search is asked and answers: its modes, request, matches and
// result.

package search

import "time"

// Mode selects how store.Store.Search ranks files. The zero value means
// [Hybrid] on a store with an embedder (store.Options.Embedder) and
// [BM25] otherwise; more modes may be added.
type Mode string

// The search modes.
const (
	// BM25 (the default, also meant by "") ranks by Okapi BM25 over
	// stemmed, Unicode-aware terms, with the scope-relative file name as a
	// second field. Each query word also counts its related words (a table
	// derived from GloVe word vectors, built into core: "workout" → "gym",
	// "fitness") at 0.3 of a word's weight, its IDF capped at the query
	// word's, so a note written in other words is found, mostly below
	// those with the query's own words (a short note with several related
	// words can outrank a long one with the word once). Document
	// frequencies and the average length come from the files scanned by
	// the same search, so a score depends only on the
	// scope (never on other tenants) and is the same on every backend.
	BM25 Mode = "bm25"
	// Literal is the reference notebook's scoring: for each
	// whitespace-separated, lower-cased query term, its non-overlapping
	// occurrences in the content plus twice those in the scope-relative
	// name, with the snippet around the first occurrence.
	Literal Mode = "literal"
	// Hybrid (the default on a store with an embedder) fuses the
	// BM25 ranking with a ranking by meaning: each file scores the cosine
	// of the query's vector and its best chunk's vector (chunks follow the
	// file's headings, paragraphs, list items and conversation turns), and
	// the two rankings are fused by reciprocal rank fusion, so a file found
	// by either comes up. Vectors are derived data: one whose chunk hash or
	// model id does not match the current content is never scored, a
	// chunk without one is embedded within the search's bounds, and when
	// the embedder fails the result is the BM25 one. It needs
	// an embedder, store.Options.Embedder (otherwise store.ErrInvalidSearchMode).
	Hybrid Mode = "hybrid"
)

// Valid reports whether m names a mode ("" included).
func (m Mode) Valid() bool {
	return m == "" || m == BM25 || m == Literal || m == Hybrid
}

// Request is one bounded search.
type Request struct {
	// Prefix selects the scope; only files that start with it and have no
	// further "/" are searched. Usually a folder ending in "/"; a partial
	// name such as "notes/p05" narrows that folder to names starting with
	// "p05". It is trusted (resolved by the application) and never
	// contributes to scores.
	Prefix string
	// Query is what to look for. [Literal] splits it on whitespace
	// into case-insensitive terms; [BM25] takes its words, stemmed.
	Query string
	// Mode selects the ranking; "" means [Hybrid] with an embedder,
	// [BM25] without.
	Mode Mode
	// Limit bounds the number of matches (> 0).
	Limit int
	// MaxFiles bounds the number of files scored (> 0).
	MaxFiles int
	// MaxChars bounds the sum, over matches, of the scope-relative name
	// length plus the snippet length, in runes (> 0). The matches share it:
	// a short file's snippet takes only what it needs and the longer ones
	// split the rest, so one snippet never takes the budget of the others.
	MaxChars int
	// MaxFileChars bounds how much of each file is read and scored (> 0).
	MaxFileChars int
	// RecencyHalfLife, when positive, weighs recent files more: each
	// match's score is multiplied by 1 - [RecencyWeight]·(1 - 2^(-age/h)),
	// a factor in (1-RecencyWeight, 1], where age is the time since the
	// file's last write (its version's time; a version in the future, or
	// one without a time, counts as now) and h the half-life. It never
	// adds or removes a match, only reorders matches whose scores are
	// within about RecencyWeight of each other. 0 (the default) is off;
	// negative is store.ErrInvalidBound.
	RecencyHalfLife time.Duration
	// Recursive searches every folder under Prefix, not only the files
	// directly under it: each folder is ranked as a search of it alone
	// would rank it (its own term index and statistics; MaxFiles and
	// MaxFileChars bound each folder's scan), and their matches are
	// merged by score, then path, sharing one Limit and one MaxChars
	// budget (names counted from Prefix) with the same water-filling as
	// one folder. Scanned then sums the folders', Truncated says whether
	// any folder or the shared budget left something out, Related holds
	// the folders' related files (merged as the matches are, within the
	// same Limit and MaxChars) only when no folder matched, and
	// Fallback is the most telling folder's reason ([FallbackBuilding]
	// before [FallbackVectors] before [FallbackLiteral]).
	Recursive bool
}

// Match is one search hit.
type Match struct {
	// Path is the full store path.
	Path string
	// Snippet is a window of the content: around the passage with the most
	// query terms ([BM25]) or the first hit ([Literal]), with
	// "..." marking the cut ends.
	Snippet string
	// Highlights are where Snippet shows the words the query matched,
	// in order, never overlapping, as rune offsets into Snippet (see
	// [Span]): the terms the ranking scored, from the same analysis that
	// picked the passage ([BM25]: the query's stemmed words, their
	// variants and related words, so "running" for "run"; [Literal]:
	// each term's occurrences, as they are counted; [Hybrid]: the BM25
	// terms the snippet holds, whichever passage it shows). A word the
	// cut ends halve ("...") is left out. Empty when the snippet holds
	// none (a match by name or meaning alone).
	Highlights []Span
	// Score is the BM25 score, rounded to 4 decimals ([BM25]), the
	// fused reciprocal-rank score, rounded to 6 decimals ([Hybrid]), or
	// content hits plus twice the scope-relative name hits
	// ([Literal]). Higher is better; only positive scores match.
	Score float64
}

// Result is the result of store.Store.Search.
type Result struct {
	// Matches are ordered by score (desc), then path (asc).
	Matches []Match
	// Scanned is the number of files the search covered: every file of
	// the scope the term index holds, or, when it scanned (see Fallback),
	// the files whose content it read and scored.
	Scanned int
	// Truncated reports that something was left out: more files than
	// MaxFiles, a file longer than MaxFileChars, a file that vanished, or
	// matches cut by Limit or MaxChars.
	Truncated bool
	// Fallback, when not empty, says why the search scanned the scope's
	// files (at most MaxFiles of them) instead of answering from the
	// term index, which covers the whole scope: the folder's index being
	// built ([FallbackBuilding]), literal mode ([FallbackLiteral]), or a
	// hybrid search of a large folder whose vector cache is being built
	// ([FallbackVectors]).
	Fallback string
	// Related, only when Matches is empty and only in hybrid mode, are
	// the files closest in meaning to a query that no file shares a word
	// with, none close enough to be called a match: at most a few, best
	// first, within the same Limit and MaxChars. They are what a reader
	// might look at next, never an answer; Truncated does not count them.
	Related []Match
}
