package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

// NamespaceJSON describes one namespace.
type NamespaceJSON struct {
	// Name is the namespace (a path's first segment).
	Name string `json:"name"`
	// Files counts the files under <name>/.
	Files int `json:"files"`
	// Chars is the size of those files, in characters.
	Chars int `json:"chars"`
	// MemoryTokens estimates the tokens of the notebook's MEMORY.md
	// (<name>/<agent name>/MEMORY.md): its characters over
	// memory.CharsPerToken (4), rounded up, the estimate of every budget of
	// the notebook; 0 when it is absent.
	MemoryTokens int `json:"memory_tokens"`
	// LastChange is the time of the newest recorded change (RFC 3339),
	// absent when the store keeps no history of it.
	LastChange *time.Time `json:"last_change,omitempty"`
	// LastBy is that change's updated_by, when it recorded one.
	LastBy string `json:"last_by,omitempty"`
	// LastClient is its client as the activity counts it (see
	// ConsolidatorClient), when it has one.
	LastClient string `json:"last_client,omitempty"`
}

// Namespace listing bounds.
const (
	DefaultNamespacePageSize = 50
	MaxNamespacePageSize     = 200
)

// estimateTokens is the notebook's token estimate of chars characters:
// memory.CharsPerToken to a token, rounded up.
func estimateTokens(chars int) int {
	return (chars + memory.CharsPerToken - 1) / memory.CharsPerToken
}

// describe counts ns's files and their size, estimates the tokens of its
// MEMORY.md and finds its last recorded change: it reads every file (in
// batches, store.Store.ReadFiles) and pages the whole history (up to
// MaxHistoryScan changes), so its cost grows with the namespace.
func (h *Handler) describe(ctx context.Context, ns string) (NamespaceJSON, error) {
	out := NamespaceJSON{Name: ns}
	main := ns + "/" + h.agent + "/" + memory.MainFile
	var paths []string
	for p, err := range h.s.Walk(ctx, ns+"/", 0) {
		if err != nil {
			return out, err
		}
		paths = append(paths, p)
	}
	files, err := h.s.ReadFiles(ctx, paths, wholeFile) // a file deleted since it was listed is left out
	if err != nil {
		return out, err
	}
	for _, f := range files {
		n := utf8.RuneCountInString(f.Content)
		out.Files++
		out.Chars += n
		if f.Path == main {
			out.MemoryTokens = estimateTokens(n)
		}
	}
	_, err = h.eachChange(ctx, ns, func(e *store.HistoryEntry) {
		if t := e.Time; !t.IsZero() && (out.LastChange == nil || t.After(*out.LastChange)) {
			t = t.UTC()
			out.LastChange, out.LastBy, out.LastClient = &t, e.Metadata[UpdatedByKey], clientOf(e.Metadata)
		}
	})
	if errors.Is(err, store.ErrHistoryUnsupported) {
		return out, nil
	}
	return out, err
}

func (h *Handler) getNamespace(c *call) error {
	d, err := h.describe(c.r.Context(), c.ns)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, d)
}

// NamespacesJSON is a page of namespaces.
type NamespacesJSON struct {
	// Namespaces is the page, sorted by name.
	Namespaces []NamespaceJSON `json:"namespaces"`
	// NextCursor continues the listing (?cursor=); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// listNamespaces lists the first path segments that hold files, in the
// order of their paths ([store.Store.Namespaces]).
func (h *Handler) listNamespaces(c *call) error {
	limit, err := c.limit()
	if err != nil {
		return err
	}
	last, err := readCursor(c, "namespaces")
	if err != nil {
		return err
	}
	out, err := h.namespacesPage(c.r.Context(), last, limit)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// namespacesPage lists up to limit namespaces after last ("" = from the
// first), each described, for the API and the pages.
func (h *Handler) namespacesPage(ctx context.Context, last string, limit int) (NamespacesJSON, error) {
	page, err := h.s.Namespaces(ctx, store.NamespacesRequest{After: last, Limit: limit})
	if err != nil {
		return NamespacesJSON{}, err
	}
	out := NamespacesJSON{Namespaces: []NamespaceJSON{}, NextCursor: makeCursor("namespaces", "", page.Next)}
	for _, ns := range page.Namespaces {
		d, err := h.describe(ctx, ns)
		if err != nil {
			return out, err
		}
		out.Namespaces = append(out.Namespaces, d)
	}
	return out, nil
}

// ForgetJSON is what forgetting a namespace did.
type ForgetJSON struct {
	// Namespace is the namespace forgotten.
	Namespace string `json:"namespace"`
	// Deleted counts the files erased.
	Deleted int `json:"deleted"`
	// Kept counts the files that changed meanwhile and were kept (then the status is 409).
	Kept int `json:"kept"`
	// HistoryEntries counts the history entries erased.
	HistoryEntries int `json:"history_entries"`
}

// forget erases every file of the namespace, each delete a
// compare-and-swap on the version listed, then its history, as agentmem
// forget does. It needs an admin and ?confirm=<namespace>; files changed
// meanwhile are kept and answered with 409 (send it again).
func (h *Handler) forget(c *call) error {
	if c.r.URL.Query().Get("confirm") != c.ns {
		return problemOf(http.StatusBadRequest, "confirmation-required", "forgetting erases every file and the history of a namespace: repeat its name as ?confirm=<namespace>")
	}
	out, err := h.forgetNamespace(c.r.Context(), c.ns)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// forgetNamespace is the one forget path of the API and the pages:
// [store.Store.Forget] of ns. Files changed meanwhile are kept and
// reported with a 409 problem holding the counts.
func (h *Handler) forgetNamespace(ctx context.Context, ns string) (ForgetJSON, error) {
	st, err := h.s.Forget(ctx, ns+"/", nil)
	out := ForgetJSON{Namespace: ns, Deleted: st.Deleted, Kept: st.Kept, HistoryEntries: st.HistoryEntries}
	if st.Kept > 0 && errors.Is(err, store.ErrConflict) {
		p := problemOf(http.StatusConflict, "forget-incomplete", fmt.Sprintf("%d files changed after they were listed and were kept: send the request again", out.Kept))
		p.Extra = map[string]any{"deleted": out.Deleted, "kept": out.Kept, "history_entries": out.HistoryEntries}
		return out, p
	}
	return out, err
}

// Search bounds at the API boundary, as the notebook's search_memory
// tool has.
const (
	MaxQueryChars = 1000
	MaxQueryTerms = 32
)

// SearchJSON is a search's answer.
type SearchJSON struct {
	// Matches is the results, best first.
	Matches []MatchJSON `json:"matches"`
	// Scanned counts the files read.
	Scanned int `json:"scanned"`
	// Truncated reports that a bound stopped the search early.
	Truncated bool `json:"truncated"`
	// Related, only when Matches is empty (hybrid search), are the files
	// closest in meaning to a query no file shares a word with: worth a
	// look, not an answer ([search.Result.Related]).
	Related []MatchJSON `json:"related,omitempty"`
	// Fallback, when not empty, says why the search scanned at most the
	// notebook's max_files files instead of answering from the folder's
	// search index ([search.Result.Fallback]).
	Fallback string `json:"fallback,omitempty"`
}

// MatchJSON is one search hit.
type MatchJSON struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// Snippet is a window around the best-matching passage.
	Snippet string `json:"snippet"`
	// Score is the ranking's score (higher is better).
	Score float64 `json:"score"`
	// Highlights are where Snippet shows the words the query matched,
	// in order and apart, in characters (Unicode code points, not
	// bytes) from its start ([search.Match.Highlights]); empty when it
	// shows none.
	Highlights []SpanJSON `json:"highlights"`
}

// SpanJSON is a run of a snippet: its characters [start, end), counted in
// Unicode code points from the snippet's start.
type SpanJSON struct {
	// Start is the offset of the run's first character.
	Start int `json:"start"`
	// End is the offset just past its last character.
	End int `json:"end"`
}

// matchJSON is m as the API answers it, its path relative to the
// namespace.
func (c *call) matchJSON(m search.Match) MatchJSON {
	out := MatchJSON{Path: c.rel(m.Path), Snippet: m.Snippet, Score: m.Score, Highlights: make([]SpanJSON, len(m.Highlights))}
	for i, s := range m.Highlights {
		out.Highlights[i] = SpanJSON{Start: s.Start, End: s.End}
	}
	return out
}

// search searches the files directly in one folder of the namespace
// (?folder=, default the notebook's "<agent name>/"), within the
// notebook's search limits.
func (h *Handler) search(c *call) error {
	q := c.r.URL.Query()
	folder := h.agent + "/"
	if q.Has("folder") {
		folder = q.Get("folder")
	}
	limit, err := queryInt(c.r, "limit", h.limits.MaxSearchResults, max(h.limits.MaxSearchResults, 100))
	if err != nil {
		return err
	}
	out, err := h.searchFolder(c, q.Get("q"), folder, limit)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// searchFolder is the one search of the API and the pages: query over the
// files directly in folder of c's namespace, within the notebook's
// limits.
func (h *Handler) searchFolder(c *call, query, folder string, limit int) (SearchJSON, error) {
	terms := map[string]bool{}
	for _, t := range search.Fields(strings.ToLower(query)) {
		terms[t] = true
	}
	switch n := utf8.RuneCountInString(query); {
	case len(terms) == 0:
		return SearchJSON{}, problemOf(http.StatusBadRequest, "invalid-parameter", "q must hold at least one search term")
	case n > MaxQueryChars || len(terms) > MaxQueryTerms:
		return SearchJSON{}, problemOf(http.StatusBadRequest, "invalid-parameter", fmt.Sprintf("q must be at most %d characters and %d distinct terms", MaxQueryChars, MaxQueryTerms))
	}
	if folder != "" && !strings.HasSuffix(folder, "/") {
		folder += "/"
	}
	if err := store.ValidatePrefix(folder); err != nil {
		return SearchJSON{}, err
	}
	res, err := h.s.Search(c.r.Context(), search.Request{Prefix: c.ns + "/" + folder, Query: query, Limit: limit,
		MaxFiles: h.limits.MaxSearchFiles, MaxChars: h.limits.MaxSearchResultChars, MaxFileChars: h.limits.MaxMemorySize})
	if err != nil {
		return SearchJSON{}, err
	}
	out := SearchJSON{Matches: []MatchJSON{}, Scanned: res.Scanned, Truncated: res.Truncated, Fallback: res.Fallback}
	for _, m := range res.Matches {
		out.Matches = append(out.Matches, c.matchJSON(m))
	}
	for _, m := range res.Related {
		out.Related = append(out.Related, c.matchJSON(m))
	}
	return out, nil
}

// SnapshotJSON is exactly what a model gets from the notebook.
type SnapshotJSON struct {
	// Namespace is the namespace the snapshot is of.
	Namespace string `json:"namespace"`
	// Instructions is the guidance put in the system instructions.
	Instructions string `json:"instructions"`
	// Snapshot is the <memory> block put beside the latest user prompt,
	// "" when there is none (an empty notebook, injection off).
	Snapshot string `json:"snapshot"`
	// Budget is how the instructions and the snapshot spend the token
	// budget, part by part.
	Budget *BudgetJSON `json:"budget"`
}

func (h *Handler) snapshot(c *call) error {
	b, err := h.mem.Budget(c.r.Context(), c.ns)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, SnapshotJSON{Namespace: c.ns, Instructions: h.mem.Instructions(), Snapshot: b.Block, Budget: budgetJSON(b)})
}

// export streams the namespace as the archive agentmem export writes for
// the prefix "<namespace>/" (core/archive; agentmem import and the import
// route read it). A failure after the first byte aborts the response, so
// a client never takes a cut archive for a whole one (the manifest, last,
// is missing).
func (h *Handler) export(c *call) error {
	ctx := c.r.Context()
	w := &exportWriter{c: c}
	_, err := archive.Export(ctx, h.s, c.ns+"/", w, nil)
	if err == nil || !w.started {
		return err
	}
	h.log.ErrorContext(ctx, "agentmem/console: export failed after it began; the response is cut", "error_kind", store.ErrorKind(err))
	panic(http.ErrAbortHandler)
}

// exportWriter sends the export's headers with its first byte, so that a
// failure before it is answered as a problem.
type exportWriter struct {
	c       *call
	started bool
}

func (w *exportWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		hd := w.c.w.Header()
		hd.Set("Content-Type", "application/x-tar")
		hd.Set("Content-Disposition", `attachment; filename="`+w.c.ns+`.tar"`)
		hd.Set("Cache-Control", "no-store")
		w.c.w.WriteHeader(http.StatusOK)
	}
	return w.c.w.Write(b)
}
