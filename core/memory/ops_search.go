package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// SearchResult is the result of search_memory.
type SearchResult struct {
	// Matches are the hits, best first.
	Matches []SearchMatch `json:"matches"`
	// Scanned is how many files were scored.
	Scanned int `json:"scanned"`
	// Truncated reports that something was left out (more files, longer
	// files, more matches or a longer text than the limits allow).
	Truncated bool `json:"truncated"`
	// Fallback, when set, says why the search scanned at most the files
	// its limit allows instead of answering from the folder's index (the
	// index being built, or literal mode); Truncated then says whether
	// files were left out.
	Fallback string `json:"fallback,omitempty"`
	// Related, only when no file matched (hybrid search), are the files
	// closest in meaning to the query, none close enough to be a match:
	// worth a look, not an answer.
	Related []SearchMatch `json:"related,omitempty"`
}

// SearchMatch is one search hit.
type SearchMatch struct {
	// File is the scope-relative file name.
	File string `json:"file"`
	// Snippet is a window of the file around its best passage (the first
	// hit in literal mode).
	Snippet string `json:"snippet"`
	// Score is the store's score (see search.Match): BM25, or content hits
	// plus twice the name hits in literal mode.
	Score float64 `json:"score"`
}

// normalizeQuery applies the query rules before any store call: at most
// 1,000 characters (before trimming), not blank, at most 32 unique terms
// (case-insensitive; the first spelling wins), re-joined by single spaces.
func normalizeQuery(q string) (string, *ToolError) {
	if notes.Runes(q) > MaxQueryChars {
		return "", toolErr(fmt.Sprintf("The query must be at most %d characters.", MaxQueryChars))
	}
	terms := search.Fields(q)
	if len(terms) == 0 {
		return "", toolErr("Pass a non-empty query.")
	}
	seen := map[string]bool{}
	var kept []string
	for _, t := range terms {
		low := strings.ToLower(t)
		if seen[low] {
			continue
		}
		if len(kept) == MaxQueryTerms {
			return "", toolErr(fmt.Sprintf("The query must have at most %d unique terms.", MaxQueryTerms))
		}
		seen[low] = true
		kept = append(kept, t)
	}
	return strings.Join(kept, " "), nil
}

func (m *Memory) search(ctx context.Context, inv Invocation, query string) (any, error) {
	q, te := normalizeQuery(query)
	if te != nil {
		return te, nil
	}
	sc, err := m.scopeOf(ctx, inv)
	if err != nil {
		return nil, err
	}
	ctx, sp := m.startSpan(ctx, "memory.search", sc)
	res, err := m.doSearch(ctx, sp, sc, q)
	sp.end("ok", res, err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (m *Memory) doSearch(ctx context.Context, sp *span, sc scope, q string) (any, error) {
	l := m.limits
	prefix := sc.path + "/"
	r, err := m.s.Search(ctx, search.Request{
		Prefix: prefix, Query: q, Mode: m.mode, Limit: l.MaxSearchResults, MaxFiles: l.MaxSearchFiles,
		MaxChars: l.MaxSearchResultChars, MaxFileChars: l.MaxMemorySize, RecencyHalfLife: m.recency,
	})
	if err != nil {
		if errors.Is(err, store.ErrPathEscape) {
			return toolErr("A memory file resolves outside the store directory; search skipped it."), nil
		}
		return nil, err
	}
	out, chars, err := boundSearch(r, prefix, l)
	if err != nil {
		return nil, err
	}
	sp.set("memory.matches", len(out.Matches))
	sp.set("memory.scanned", out.Scanned)
	sp.set("memory.chars", chars)
	sp.set("memory.truncated", out.Truncated)
	return out, nil
}

// boundSearch re-bounds a store's search result whatever the backend
// returned: at most MaxSearchResults matches, names plus snippets within
// MaxSearchResultChars. A path outside the scope or nested below it is
// ErrScope. It also returns the snippet chars.
func boundSearch(r search.Result, prefix string, l Limits) (*SearchResult, int, error) {
	out := &SearchResult{Matches: []SearchMatch{}, Truncated: r.Truncated || len(r.Matches) > l.MaxSearchResults}
	if r.Fallback == search.FallbackBuilding { // literal mode always scans: nothing to tell the model
		out.Fallback = r.Fallback
	}
	var chars int
	var cut bool
	var err error
	out.Matches, chars, cut, err = boundMatches(r.Matches, prefix, l)
	if err != nil {
		return nil, 0, err
	}
	out.Truncated = out.Truncated || cut
	if len(out.Matches) == 0 && len(r.Related) > 0 {
		var n int
		if out.Related, n, _, err = boundMatches(r.Related, prefix, l); err != nil {
			return nil, 0, err
		}
		chars += n
	}
	out.Scanned = max(r.Scanned, 0) // the index covers a scope past MaxSearchFiles
	return out, chars, nil
}

// boundMatches turns a store's matches into at most MaxSearchResults
// search matches whose names and snippets fit in MaxSearchResultChars, and
// reports the snippet chars and whether any was cut. A path outside the
// scope or nested below it is ErrScope.
func boundMatches(ms []search.Match, prefix string, l Limits) ([]SearchMatch, int, bool, error) {
	out := []SearchMatch{}
	remaining, chars, truncated := l.MaxSearchResultChars, 0, false
	for _, mt := range ms[:min(len(ms), l.MaxSearchResults)] {
		name, ok := strings.CutPrefix(mt.Path, prefix)
		if !ok {
			return nil, 0, false, fmt.Errorf("%w: outside the requested scope", ErrScope)
		}
		if !notes.ValidName(name) {
			return nil, 0, false, fmt.Errorf("%w: nested result", ErrScope)
		}
		remaining -= notes.Runes(name)
		if remaining < 0 {
			truncated = true
			break
		}
		snip, cut := driver.CutRunes(mt.Snippet, remaining)
		truncated = truncated || cut
		remaining -= notes.Runes(snip)
		chars += notes.Runes(snip)
		out = append(out, SearchMatch{File: name, Snippet: snip, Score: mt.Score})
	}
	return out, chars, truncated, nil
}
