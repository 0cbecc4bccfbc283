// Search: choosing candidates, ranking them (BM25 or hybrid) and shaping the
// matches within the caller's bounds.

package search

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/internal/lexis"
	"github.com/agentmem/agentmem/core/internal/rowpath"
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
	cut     bool // content is a prefix of the file
	// version is the row's version as read ("" when the read did not
	// say): its time is the file's last write, which recency weighs.
	version string
	// body, when set, is the term index's counts of content's body for
	// the search's query (content is exactly what was indexed): scoring
	// reads them instead of analysing content.
	body *indexedBody
}

// indexedBody is a body's length in terms and the frequency of each
// group of a query's terms in it (variants weighted), from the term
// index.
type indexedBody struct {
	n  int
	tf []float64
}

// Search answers r, a request the store has validated (its prefix, its
// bounds, its mode, an embedder for Hybrid): see store.Store.Search.
func (s *Engine) Search(ctx context.Context, r Request) (res Result, err error) {
	switch {
	case r.Mode == "" && s.embedder != nil:
		r.Mode = Hybrid
	case r.Mode == "":
		r.Mode = BM25
	}
	terms := Fields(strings.ToLower(r.Query))
	if len(terms) == 0 {
		return Result{Matches: []Match{}}, nil
	}
	s.cache.tick() // a new generation: what this search reads stays cached
	if r.Recursive {
		return s.searchTree(ctx, r, terms)
	}
	f, err := s.searchFolder(ctx, r, terms)
	if err != nil {
		return Result{}, err
	}
	s.weighRecency(ctx, r, &f)
	res = f.result(r.Limit, r.MaxChars)
	s.fellBack(ctx, res, r.Prefix)
	return res, nil
}

// found is one folder's search before shaping: its hits and related
// files ranked (sorted by score, then path), the files it covered,
// whether anything was left out before shaping, and why it scanned.
type found struct {
	hits, related []hit
	scanned       int
	truncated     bool
	fallback      string
}

// result shapes f into at most limit matches within maxChars runes, and
// the related files when nothing matched.
func (f *found) result(limit, maxChars int) Result {
	res := Result{Matches: []Match{}, Scanned: f.scanned, Fallback: f.fallback}
	var cut bool
	res.Matches, cut = shape(f.hits, limit, maxChars)
	res.Truncated = cut || f.truncated
	if len(res.Matches) == 0 && len(f.related) > 0 {
		res.Related, _ = shape(f.related, limit, maxChars)
	}
	return res
}

// searchFolder ranks the files directly under r.Prefix in r.Mode (set):
// from the folder's term index when it can answer, else by a scan.
func (s *Engine) searchFolder(ctx context.Context, r Request, terms []string) (found, error) {
	if r.Mode == Hybrid {
		return s.searchHybrid(ctx, r, terms)
	}
	fallback := FallbackLiteral
	if r.Mode == BM25 {
		f, ok, reason, err := s.searchIndexed(ctx, r)
		if ok || err != nil {
			return f, err
		}
		fallback = reason
	}
	cands, truncated, err := s.candidates(ctx, r)
	if err != nil {
		return found{}, err
	}
	f := rankHits(&s.cache, r, terms, cands)
	f.truncated = f.truncated || truncated
	f.fallback = fallback
	return f, nil
}

// fellBack logs that a search scanned at most max_files files of a folder
// whose index was being built, when files were left out.
func (s *Engine) fellBack(ctx context.Context, res Result, prefix string) {
	if res.Truncated && res.Fallback == FallbackBuilding {
		s.warn(ctx, "a search scanned at most max_files files of a folder while its index was being built", "", prefix, nil)
	}
}

// searchTree is Search with r.Recursive: each folder under r.Prefix that
// holds a file is searched as a search of it alone would (its own index,
// statistics and MaxFiles), and the hits of all of them are merged by
// score, then path, and shaped once, sharing Limit and MaxChars (names
// counted from r.Prefix). Scanned is the sum of the folders', Truncated
// whether any folder or the shaping left something out, Related the
// folders' related files when no folder matched, and Fallback the most
// telling of the folders' reasons ([FallbackBuilding] first).
func (s *Engine) searchTree(ctx context.Context, r Request, terms []string) (Result, error) {
	scopes, err := s.scopesUnder(ctx, r.Prefix)
	if err != nil {
		return Result{}, err
	}
	var all found
	for _, scope := range scopes {
		q := r
		q.Prefix, q.Recursive = scope, false
		f, err := s.searchFolder(ctx, q, terms)
		if err != nil {
			return Result{}, err
		}
		s.weighRecency(ctx, q, &f)
		all.hits = append(all.hits, f.hits...)
		all.related = append(all.related, f.related...)
		all.scanned += f.scanned
		all.truncated = all.truncated || f.truncated
		if slices.Index(fallbackOrder, f.fallback) > slices.Index(fallbackOrder, all.fallback) {
			all.fallback = f.fallback
		}
	}
	for _, hits := range [][]hit{all.hits, all.related} {
		for i := range hits {
			hits[i].rel = strings.TrimPrefix(hits[i].c.path, r.Prefix)
		}
		sortHits(hits)
	}
	res := all.result(r.Limit, r.MaxChars)
	s.fellBack(ctx, res, r.Prefix)
	return res, nil
}

// fallbackOrder ranks the reasons a folder scanned, the least telling
// first: a recursive search reports its folders' last in this order.
var fallbackOrder = []string{"", FallbackLiteral, FallbackVectors, FallbackBuilding}

// scopesUnder returns, in path order, the scope of each folder under
// prefix that holds a file: the folder itself, or prefix for the files
// directly under a prefix that ends inside a name ("notes/p05" for
// notes/p05.md).
func (s *Engine) scopesUnder(ctx context.Context, prefix string) ([]string, error) {
	var scopes []string
	seen := map[string]bool{}
	for p, err := range s.h.Walk(ctx, prefix) {
		if err != nil {
			return scopes, err
		}
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		scope := p[:strings.LastIndexByte(p, '/')+1]
		if len(scope) < len(prefix) {
			scope = prefix // a partial name: "notes/p05"
		}
		if !seen[scope] {
			seen[scope] = true
			scopes = append(scopes, scope)
		}
	}
	return scopes, nil
}

// searchIndexed answers a BM25 search from the folder's term index: the
// files its terms rank best over the whole folder (and those changed since
// they were indexed) are read and scored from their content, with the
// folder's statistics, so the result is what a scan of every file would
// give, at the cost of a few reads. ok is false when the index cannot
// answer (reason says why); the caller then scans.
func (s *Engine) searchIndexed(ctx context.Context, r Request) (_ found, ok bool, reason string, err error) {
	if s.terms == nil {
		return found{}, false, "", nil
	}
	folder := r.Prefix[:strings.LastIndexByte(r.Prefix, '/')+1]
	sc := scanners.Get().(*lexis.Scanner)
	defer scanners.Put(sc)
	bq := newBM25Query(sc, r.Query, nil)
	if bq == nil {
		return found{}, false, "", nil // no word: scored literally
	}
	fi, fresh, err := s.terms.folder(ctx, folder, r.MaxFiles)
	if err != nil || fi == nil {
		return found{}, false, FallbackBuilding, err
	}
	cands, st, covered, truncated, err := s.indexCandidates(ctx, fi, bq, r, r.Limit+extraCandidates, fresh, nil, 0)
	if err != nil {
		return found{}, false, "", err
	}
	hits := bq.score(&s.cache, sc, r.Prefix, cands, st)
	sortHits(hits)
	return found{hits: hits, scanned: covered, truncated: truncated}, true, "", nil
}

// indexCandidates reads the k files fi ranks best for bq under r.Prefix,
// the more paths, and those of the folder changed since they were
// indexed, each cut to r.MaxFileChars (at most r.MaxFiles in all), and
// returns them sorted by path with the folder's statistics, the files the
// ranking covered and whether a file was cut. A file whose content is not
// what was indexed (changed behind the store's back) is queued again.
//
// fresh are files read during this search (by the index's build), whose
// content is taken as it is instead of being read again.
//
// maxTerms, when positive, bounds the length (in terms) of the files
// taken from fi's ranking (see [folderIndex.capTerms]).
func (s *Engine) indexCandidates(ctx context.Context, fi *folderIndex, bq *bm25Query, r Request, k int, fresh []driver.ScopeFile, more []string, maxTerms int) (_ []candidate, _ *corpusStats, covered int, truncated bool, _ error) {
	// The paths queued as changed are taken before the ranking: one the
	// feed applies in between is then read as queued or ranked as
	// indexed, never missed as neither.
	pending := s.terms.pendingIn(fi.folder)
	floor := 0.0
	if r.RecencyHalfLife > 0 {
		floor = 1 - RecencyWeight // the most recency takes off a score
	}
	top, st, covered := fi.top(bq, r.Prefix, k, r.Limit, floor)
	if maxTerms > 0 {
		top = fi.capTerms(top, maxTerms, r.Limit+extraCandidates)
	}
	// BM25's and the other candidates in turn, so that MaxFiles keeps
	// the best of both.
	read := make([]string, 0, len(top)+len(more))
	for i := range max(len(top), len(more)) {
		for _, list := range [][]string{top, more} {
			if i < len(list) && !slices.Contains(read, list[i]) {
				read = append(read, list[i])
			}
		}
	}
	for _, p := range pending {
		if strings.HasPrefix(p, r.Prefix) && rowpath.DirectlyUnder(p, fi.folder) && !slices.Contains(read, p) {
			read = append(read, p)
		}
	}
	truncated = len(read) > r.MaxFiles // files ranked or changed, never read nor scored
	read = read[:min(len(read), r.MaxFiles)]
	rows := make(map[string]*driver.File, len(read))
	var missing []string
	got := make(map[string]driver.ScopeFile, len(fresh))
	for _, f := range fresh {
		got[f.Path] = f
	}
	for _, p := range read {
		if f, ok := got[p]; ok && (!f.Truncated || r.MaxFileChars <= maxIndexedChars) {
			rows[p] = &driver.File{Path: p, Content: f.Content, Version: f.Version}
		} else {
			missing = append(missing, p)
		}
	}
	more2, err := s.getFiles(ctx, missing)
	if err != nil {
		return nil, nil, 0, false, err
	}
	maps.Copy(rows, more2)
	slices.Sort(read)
	cands := make([]candidate, 0, len(read))
	for _, p := range read {
		f := rows[p]
		indexed := fi.has(p)
		if gone := f == nil || f.Tombstone; gone && indexed {
			covered-- // counted by the index, gone
		} else if !gone && !indexed {
			covered++ // not indexed yet, read
		}
		current := f != nil && !f.Tombstone && fi.indexedAs(p, f.Content)
		if !current {
			s.terms.changed(p) // changed behind the index: look again
		}
		if f == nil || f.Tombstone {
			continue
		}
		content, cut := driver.CutRunes(f.Content, r.MaxFileChars)
		truncated = truncated || cut
		c := candidate{path: p, content: content, cut: cut, version: f.Version}
		if current && !cut && r.MaxFileChars <= maxIndexedChars {
			c.body = fi.bodyCounts(bq, p)
		}
		cands = append(cands, c)
	}
	return cands, st, covered, truncated, nil
}

// candidates returns up to MaxFiles files directly under the prefix, each
// cut to MaxFileChars, and whether anything was left out: a file cut or
// vanished, or more files than MaxFiles.
func (s *Engine) candidates(ctx context.Context, r Request) ([]candidate, bool, error) {
	want := r.MaxFiles + 1
	truncated := false
	// ReadScope takes a whole folder ("" or ending in "/") and returns its
	// first files; a prefix that ends inside a name ("notes/p05") would
	// hand it a partial name that no driver's scope key matches, and
	// passing the folder instead could fill Limit with the files sorted
	// before the prefix. Such prefixes take the listing path, which
	// starts at the prefix itself on every backend.
	if s.scope != nil && rowpath.IsFolder(r.Prefix) {
		files, err := s.scope.ReadScope(ctx, driver.ScopeParams{Prefix: r.Prefix, Limit: want, MaxChars: r.MaxFileChars})
		if err != nil {
			return nil, false, err
		}
		out := make([]candidate, 0, len(files))
		now := s.now()
		for _, f := range files {
			if !rowpath.DirectlyUnder(f.Path, r.Prefix) {
				continue // a driver bug must not widen the scope
			}
			if f.Lifetime.ExpiredAt(now) {
				continue // expired: as good as deleted
			}
			if len(out) == r.MaxFiles {
				truncated = true // the lookahead: more files than MaxFiles
				break
			}
			content, cut := driver.CutRunes(f.Content, r.MaxFileChars)
			truncated = truncated || cut || f.Truncated
			out = append(out, candidate{path: f.Path, content: content, cut: cut || f.Truncated, version: f.Version})
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
		content, cut := driver.CutRunes(f.Content, r.MaxFileChars)
		truncated = truncated || cut
		out = append(out, candidate{path: p, content: content, cut: cut, version: f.Version})
	}
	if len(paths) > r.MaxFiles {
		truncated = true // the lookahead: more files than MaxFiles, never read nor scored
	}
	return out, truncated, nil
}

// hit is one scored file, with how to cut its snippet.
type hit struct {
	c       candidate
	rel     string // scope-relative name
	score   float64
	snippet func(width int) (string, []Span)
	// marks, when set, returns where c.content holds the words the
	// query matched (BM25's terms as scored, or the literal terms), in
	// rune offsets sorted by start: what another snippet of the file
	// (a hybrid search's best chunk) highlights.
	marks func() []occurrence
	// cover is the share of the query's own terms' IDF that the file
	// has (BM25 only; related and expansion words do not count).
	cover float64
}

// rank scores cands (sorted by path, contents already bounded, at most
// r.MaxFiles of them) in r's mode, with the analysis kept in cache, and
// shapes the best into matches: what a scan of one folder returns.
func rank(cache *analysisCache, r Request, terms []string, cands []candidate) Result {
	f := rankHits(cache, r, terms, cands)
	return f.result(r.Limit, r.MaxChars)
}

// rankHits is rank before shaping: the hits sorted by score, then path.
func rankHits(cache *analysisCache, r Request, terms []string, cands []candidate) found {
	var f found
	if len(cands) > r.MaxFiles {
		cands, f.truncated = cands[:r.MaxFiles], true
	}
	f.scanned = len(cands)
	if r.Mode != Literal {
		f.hits = bm25(cache, r.Prefix, r.Query, cands)
	}
	if f.hits == nil { // literal mode, or a query without words
		f.hits = lexical(r.Prefix, terms, cands)
	}
	sortHits(f.hits)
	return f
}

// lexical scores candidates exactly as the reference does: each term's
// non-overlapping hits in the content plus twice those in the name. terms
// must be lower-cased. Only positive scores are returned.
func lexical(prefix string, terms []string, cands []candidate) []hit {
	hits := []hit{}
	for _, c := range cands {
		rel := strings.TrimPrefix(c.path, prefix)
		lrel, text := strings.ToLower(rel), strings.ToLower(c.content)
		score := 0
		for _, t := range terms {
			score += strings.Count(text, t) + 2*strings.Count(lrel, t)
		}
		if score > 0 {
			content := c.content
			hits = append(hits, hit{c: c, rel: rel, score: float64(score),
				snippet: func(w int) (string, []Span) { return snippet(content, terms, w) },
				marks:   func() []occurrence { return literalMarks(content, terms) }})
		}
	}
	return hits
}

// minShare is the snippet length, in runes, that each match is given at
// least when the budget is shared; a budget too small for that returns
// fewer matches rather than all of them with useless snippets.
const minShare = 50

// shape turns ranked hits into at most limit matches whose names and
// snippets fit in maxChars runes together, and reports whether anything
// was left out. The budget is shared by water-filling: each match needs
// its name plus its whole content; the ones that need less than an equal
// share get what they need, the others split the rest equally. When that
// leaves some match less than its name plus minShare (or its need), fewer
// matches share it; a single match takes the whole budget, as in the
// reference.
func shape(hits []hit, limit, maxChars int) ([]Match, bool) {
	n := min(limit, len(hits))
	names := make([]int, n)
	needs := make([]int, n)
	for i, h := range hits[:n] {
		names[i] = utf8.RuneCountInString(h.rel)
		needs[i] = names[i] + utf8.RuneCountInString(h.c.content)
	}
	var alloc []int
	for k := n; k >= 1; k-- {
		alloc = waterfill(needs[:k], maxChars)
		ok := true
		for i := range k {
			if alloc[i] < min(needs[i], names[i]+minShare) {
				ok = false
				break
			}
		}
		if ok || k == 1 {
			break
		}
	}
	out := []Match{}
	truncated := false
	for i, a := range alloc {
		available := a - names[i]
		if available <= 0 {
			truncated = true
			break
		}
		text, spans := hits[i].snippet(available)
		out = append(out, Match{Path: hits[i].c.path, Snippet: text, Highlights: spans, Score: hits[i].score})
	}
	return out, truncated || len(out) < len(hits)
}

// waterfill splits total among needs (in rank order): the smallest needs
// are met in full while they are below an equal share of what is left; the
// rest split what remains equally, the better ranked taking the remainder.
func waterfill(needs []int, total int) []int {
	alloc := make([]int, len(needs))
	order := make([]int, len(needs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(needs[a], needs[b]) })
	left := total
	for j, i := range order {
		alloc[i] = min(needs[i], left/(len(order)-j))
		left -= alloc[i]
	}
	for i := range alloc {
		d := min(left, needs[i]-alloc[i])
		alloc[i] += d
		left -= d
	}
	return alloc
}

// snippet returns a window of at most width runes of content around the
// first hit of any term (lower-cased terms), with "..." marking cut ends,
// and the spans of it that show a term.
func snippet(content string, terms []string, width int) (string, []Span) {
	if width <= 0 {
		return "", nil
	}
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
	return window([]rune(content), center-width/3, width, literalMarks(content, terms))
}

// window returns at most width runes of runes starting at start (pulled
// back when the window would pass the end), with "..." replacing the
// first and last three runes where the text is cut, and the spans of it
// that show marks (rune ranges of runes, sorted by start; see
// [highlights]).
func window(runes []rune, start, width int, marks []occurrence) (string, []Span) {
	start = max(0, start)
	end := min(len(runes), start+width)
	start = max(0, end-width)
	s := slices.Clone(runes[start:end])
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
	return string(s), highlights(marks, start, end, start > 0, end < len(runes))
}
