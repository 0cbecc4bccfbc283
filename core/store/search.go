package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
)

// Fields splits s on runs of Unicode whitespace (including U+001C–U+001F,
// as Python's str.split does) and never yields empty strings.
func Fields(s string) []string {
	return strings.FieldsFunc(s, isSpace)
}

func isSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// candidate is one file's bounded content, to be scored.
type candidate struct {
	path    string
	content string
}

// Search runs a bounded lexical search over the files directly under
// r.Prefix. Each query term (lower-cased) scores its non-overlapping hits in
// the content plus twice its hits in the scope-relative name; matches sort
// by score, then path; the names and snippets of all matches together fit
// in r.MaxChars runes.
//
// r.Prefix is a plain string prefix, as for ListPaths, narrowed to one
// folder: the files searched are those whose path starts with r.Prefix and
// has no "/" after it ("notes/p05" searches notes/p05.md and notes/p05x.md,
// not notes/p05/a.md).
//
// An empty query returns an empty result. It fails with ErrInvalidPath for
// a bad prefix and ErrInvalidBound when Limit, MaxFiles, MaxChars or
// MaxFileChars is not positive.
func (s *Store) Search(ctx context.Context, r SearchRequest) (res SearchResult, err error) {
	ctx, o := s.observe(ctx, OperationInfo{Op: OpSearch})
	defer func() { o.done(err, false, len(res.Matches)) }()
	if err := s.usable(ctx); err != nil {
		return SearchResult{}, err
	}
	if err := ValidatePrefix(r.Prefix); err != nil {
		return SearchResult{}, err
	}
	for _, b := range []struct {
		name string
		n    int
	}{{"limit", r.Limit}, {"max_files", r.MaxFiles}, {"max_chars", r.MaxChars}, {"max_file_chars", r.MaxFileChars}} {
		if b.n <= 0 {
			return SearchResult{}, fmt.Errorf("%w: %s must be positive, got %d", ErrInvalidBound, b.name, b.n)
		}
	}
	terms := Fields(strings.ToLower(r.Query))
	if len(terms) == 0 {
		return SearchResult{Matches: []Match{}}, nil
	}
	cands, truncated, err := s.candidates(ctx, r)
	if err != nil {
		return SearchResult{}, err
	}
	res = lexical(r.Prefix, terms, cands, r.Limit, r.MaxFiles, r.MaxChars)
	res.Truncated = res.Truncated || truncated
	return res, nil
}

// candidates returns up to MaxFiles files directly under the prefix, each
// cut to MaxFileChars, and whether anything was left out: a file cut or
// vanished, or more files than MaxFiles.
func (s *Store) candidates(ctx context.Context, r SearchRequest) ([]candidate, bool, error) {
	want := r.MaxFiles + 1
	truncated := false
	// ReadScope takes a whole folder ("" or ending in "/") and returns its
	// first files; a prefix that ends inside a name ("notes/p05") would
	// hand it a partial name that no driver's scope key matches, and
	// passing the folder instead could fill Limit with the files sorted
	// before the prefix. Such prefixes take the listing path, which
	// starts at the prefix itself on every backend.
	if s.scope != nil && isFolder(r.Prefix) {
		files, err := s.scope.ReadScope(ctx, driver.ScopeParams{Prefix: r.Prefix, Limit: want, MaxChars: r.MaxFileChars})
		if err != nil {
			return nil, false, err
		}
		out := make([]candidate, 0, len(files))
		for _, f := range files {
			if !directlyUnder(f.Path, r.Prefix) {
				continue // a driver bug must not widen the scope
			}
			if len(out) == r.MaxFiles {
				truncated = true // the lookahead: more files than MaxFiles
				break
			}
			content, cut := cutRunes(f.Content, r.MaxFileChars)
			truncated = truncated || cut || f.Truncated
			out = append(out, candidate{path: f.Path, content: content})
		}
		return out, truncated, nil
	}
	paths, err := s.list(ctx, r.Prefix, want, true)
	if err != nil {
		return nil, false, err
	}
	read := paths[:min(len(paths), r.MaxFiles)]
	rows, err := s.getFiles(ctx, read)
	if err != nil {
		return nil, false, err
	}
	out := make([]candidate, 0, len(paths))
	for _, p := range read {
		f := rows[p]
		if f == nil || f.Tombstone {
			truncated = true // vanished after listing
			continue
		}
		content, cut := cutRunes(f.Content, r.MaxFileChars)
		truncated = truncated || cut
		out = append(out, candidate{path: p, content: content})
	}
	if len(paths) > r.MaxFiles {
		truncated = true // the lookahead: more files than MaxFiles, never read nor scored
	}
	return out, truncated, nil
}

// getFiles reads paths with the driver's batched read, or one by one.
func (s *Store) getFiles(ctx context.Context, paths []string) (map[string]*driver.File, error) {
	out := make(map[string]*driver.File, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	if s.batch != nil {
		files, err := s.batch.GetFiles(ctx, paths)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f != nil {
				out[f.Path] = f
			}
		}
		return out, nil
	}
	for _, p := range paths {
		f, err := s.d.GetFile(ctx, p)
		if err != nil {
			return nil, err
		}
		out[p] = f
	}
	return out, nil
}

// lexical scores candidates (sorted by path, contents already bounded)
// exactly as the reference does. terms must be lower-cased.
func lexical(prefix string, terms []string, cands []candidate, limit, maxFiles, maxChars int) SearchResult {
	res := SearchResult{Matches: []Match{}}
	type scored struct {
		c     candidate
		rel   string
		score float64
	}
	var hits []scored
	for i, c := range cands {
		if res.Scanned == maxFiles {
			res.Truncated = res.Truncated || i < len(cands)
			break
		}
		res.Scanned++
		rel := strings.TrimPrefix(c.path, prefix)
		lrel, text := strings.ToLower(rel), strings.ToLower(c.content)
		score := 0
		for _, t := range terms {
			score += strings.Count(text, t) + 2*strings.Count(lrel, t)
		}
		if score > 0 {
			hits = append(hits, scored{c, rel, float64(score)})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(a.c.path, b.c.path)
	})
	remaining := maxChars
	for _, h := range hits {
		if len(res.Matches) == limit {
			break
		}
		available := remaining - utf8.RuneCountInString(h.rel)
		if available <= 0 {
			res.Truncated = true
			break
		}
		snip := snippet(h.c.content, terms, available)
		res.Matches = append(res.Matches, Match{Path: h.c.path, Snippet: snip, Score: h.score})
		remaining -= utf8.RuneCountInString(h.rel) + utf8.RuneCountInString(snip)
	}
	if len(res.Matches) < len(hits) {
		res.Truncated = true
	}
	return res
}

// snippet returns a window of at most width runes of content around the
// first hit of any term (lower-cased terms), with "..." marking cut ends.
func snippet(content string, terms []string, width int) string {
	if width <= 0 {
		return ""
	}
	runes := []rune(content)
	lower := strings.ToLower(content)
	center := -1
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 {
			ri := utf8.RuneCountInString(lower[:i])
			if center < 0 || ri < center {
				center = ri
			}
		}
	}
	center = max(center, 0)
	start := max(0, center-width/3)
	end := min(len(runes), start+width)
	start = max(0, end-width)
	s := []rune(string(runes[start:end]))
	dots := func(at int) {
		if len(s) >= 3 {
			copy(s[at:at+3], []rune("..."))
		} else {
			for i := range s {
				s[i] = '.'
			}
		}
	}
	if start > 0 {
		dots(0)
	}
	if end < len(runes) {
		dots(max(0, len(s)-3))
	}
	return string(s)
}
