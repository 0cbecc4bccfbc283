package console

import (
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/store"
)

// EntryJSON is one recorded change.
type EntryJSON struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// Version is the version the change made.
	Version string `json:"version"`
	// Previous is the version the change replaced, absent for a create.
	Previous string `json:"previous,omitempty"`
	// Kind is write, delete, or restore (a write that restored a past
	// version), as agentmem log shows it. The store records a file's
	// expiry as a delete whose updated_by is store.ExpiryUpdatedBy
	// ("agentmem-expiry"); restore brings it back.
	Kind string `json:"kind"`
	// Time is when the change was recorded (RFC 3339, UTC).
	Time *time.Time `json:"time,omitempty"`
	// OperationID is the change's operation, if it had one.
	OperationID string `json:"operation_id,omitempty"`
	// Metadata is the change's metadata (updated_by, client, …).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Chars is the size of the content written, in characters.
	Chars int `json:"chars"`
	// ExpiresAt is the expiry a write gave the file (RFC 3339, UTC),
	// absent for none.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Pinned reports a write that pinned the file.
	Pinned bool `json:"pinned,omitempty"`
}

// VersionJSON is a past version with its content.
type VersionJSON struct {
	EntryJSON
	// Content is the whole content that version held.
	Content string `json:"content"`
}

func (c *call) entry(e *store.HistoryEntry) EntryJSON {
	kind := "write"
	switch {
	case e.Deleted:
		kind = "delete"
	case e.Metadata[store.RestoredFromKey] != "":
		kind = "restore"
	}
	out := EntryJSON{Path: c.rel(e.Path), Version: e.Version, Previous: e.Previous, Kind: kind,
		OperationID: e.OperationID, Metadata: e.Metadata, Chars: utf8.RuneCountInString(e.Content),
		ExpiresAt: expiresAt(e.ExpiresAt), Pinned: e.Pinned}
	if !e.Time.IsZero() {
		t := e.Time.UTC()
		out.Time = &t
	}
	return out
}

// HistoryJSON is a page of history.
type HistoryJSON struct {
	// Entries is the page, newest first within each file.
	Entries []EntryJSON `json:"entries"`
	// NextCursor continues the history (?cursor=); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// history lists the changes of one file (with a path) or of the whole
// namespace, ordered by path and then newest first.
func (h *Handler) history(c *call) error {
	req := store.HistoryRequest{Prefix: c.ns + "/"}
	kind := "history"
	if c.path != "" {
		req.Path, kind = c.path, "history:"+c.path
	}
	var err error
	if req.Limit, err = c.limit(); err != nil {
		return err
	}
	if req.After, err = readCursor(c, kind); err != nil {
		return err
	}
	page, err := h.s.History(c.r.Context(), req)
	if err != nil {
		return err
	}
	out := HistoryJSON{Entries: []EntryJSON{}, NextCursor: makeCursor(kind, c.ns, page.Next)}
	for i := range page.Entries {
		out.Entries = append(out.Entries, c.entry(&page.Entries[i]))
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// versionParam reads the required query parameter name.
func versionParam(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", problemOf(http.StatusBadRequest, "invalid-parameter", name+" is required: a version from the file's history")
	}
	return v, nil
}

func (h *Handler) readVersion(c *call) error {
	v, err := versionParam(c.r, "v")
	if err != nil {
		return err
	}
	e, err := h.s.ReadVersion(c.r.Context(), c.path, v)
	if err != nil {
		return err
	}
	c.w.Header().Set("ETag", ETag(e.Version))
	return writeJSON(c.w, http.StatusOK, VersionJSON{EntryJSON: c.entry(e), Content: e.Content})
}

// DiffJSON is the difference of two versions of a file.
type DiffJSON struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// From is the older version compared.
	From string `json:"from"`
	// To is the newer version compared.
	To string `json:"to"`
	// Diff is a unified diff (diff -u) from From to To, "" when they hold
	// the same content. A delete's content is empty.
	Diff string `json:"diff"`
}

// diff compares ?from= with ?to= (default: the current version).
func (h *Handler) diff(c *call) error {
	from, err := versionParam(c.r, "from")
	if err != nil {
		return err
	}
	d, err := h.diffOf(c, from, c.r.URL.Query().Get("to"))
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, d)
}

// RestoreBody is the JSON body of a restore.
type RestoreBody struct {
	// Version is the past version whose content to write back.
	Version string `json:"version"`
}

// restore writes a past version back, as a compare-and-swap on If-Match
// (the current version) or If-None-Match: * (the file is absent, after a
// delete): a double submit with one Idempotency-Key restores once.
func (h *Handler) restore(c *call) error {
	p := c.path
	pc, err := mutationPrecondition(c.r)
	if err != nil {
		return err
	}
	if mediaType(c.r) != "application/json" {
		return errMediaType(`application/json ({"version": …})`)
	}
	body, err := h.readBody(c)
	if err != nil {
		return err
	}
	var rb RestoreBody
	if err := decodeJSON(body, &rb); err != nil {
		return err
	}
	if rb.Version == "" {
		return problemOf(http.StatusBadRequest, "invalid-body", "version is required: a version from the file's history")
	}
	if !pc.given {
		return errPreconditionRequired("a restore replaces the current version", "when the file was deleted")
	}
	op, err := c.operation(p, pc.ifMatch, pc.ifNoneMatch, rb.Version)
	if err != nil {
		return err
	}
	m, err := h.restorePath(c, p, rb.Version, pc.expected, op)
	if err != nil {
		return err
	}
	setMutationHeaders(c.w, m.Version, m)
	return writeJSON(c.w, http.StatusOK, MutationJSON{Path: c.rel(p), Version: m.Version, RestoredFrom: rb.Version})
}

// restorePath is the one restore path of the API and the pages: writes
// version back over expected ("" = the file is absent), stamped with who
// made it.
func (h *Handler) restorePath(c *call, p, version, expected string, op *store.Operation) (store.Mutation, error) {
	meta, err := c.stampMetadata(nil)
	if err != nil {
		return store.Mutation{}, err
	}
	return h.s.Restore(c.r.Context(), store.RestoreRequest{Path: p, Version: version, Expected: expected, Operation: op, Metadata: meta})
}

// diffOf is the difference of the versions from and to ("" = the current
// one) of the file c's route names.
func (h *Handler) diffOf(c *call, from, to string) (DiffJSON, error) {
	ctx, p, rel := c.r.Context(), c.path, c.relPath
	a, err := h.s.ReadVersion(ctx, p, from)
	if err != nil {
		return DiffJSON{}, err
	}
	var content string
	if to == "" {
		f, err := h.s.Read(ctx, p, wholeFile)
		if err != nil {
			return DiffJSON{}, err
		}
		to, content = f.Version, f.Content
	} else {
		b, err := h.s.ReadVersion(ctx, p, to)
		if err != nil {
			return DiffJSON{}, err
		}
		content = b.Content
	}
	d := unifiedDiff(rel+"@"+from, rel+"@"+to, a.Content, content)
	return DiffJSON{Path: rel, From: from, To: to, Diff: d}, nil
}
