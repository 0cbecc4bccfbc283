package console

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/store"
)

// wholeFile is the bound of a read that wants the whole file.
const wholeFile = math.MaxInt32

// Listing bounds.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// FileJSON is a file as the API returns it.
type FileJSON struct {
	// Path is relative to the namespace ("main/MEMORY.md").
	Path string `json:"path"`
	// Version is the whole file's version, also sent as the ETag.
	Version string `json:"version"`
	// Content is the file's whole content.
	Content string `json:"content"`
	// Metadata is what was stored with the content (who wrote it, …).
	Metadata map[string]string `json:"metadata,omitempty"`
	// OperationID is the operation that last wrote the file, if any.
	OperationID string `json:"operation_id,omitempty"`
	// Chars is Content's length in characters (Unicode code points).
	Chars int `json:"chars"`
	// Tokens estimates what reading the whole file costs a model: Chars
	// / memory.CharsPerToken, rounded up (memory.EstimateTokens).
	Tokens int `json:"tokens"`
	// ExpiresAt is when the file expires (RFC 3339, UTC); absent when it
	// never does.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Pinned reports a pinned file: it never expires, and the notebook
	// lists it first.
	Pinned bool `json:"pinned"`
}

// WriteBody is the JSON body of a file write.
type WriteBody struct {
	// Content is the file's whole new content (required).
	Content *string `json:"content"`
	// Metadata is stored with the content; the API adds UpdatedByKey and
	// ClientKey, which the body may not set.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Expires gives the file an expiry: a duration from now ("7d", "2w",
	// "12h"), a date ("2026-12-31", kept through that day, UTC), an RFC
	// 3339 time, or "never" to remove it (memory.ParseExpiry). Absent
	// keeps the file's expiry.
	Expires *string `json:"expires,omitempty"`
	// Pinned pins (true) or unpins (false) the file; absent keeps its pin.
	// A pinned file never expires: a write that would leave the file both
	// pinned and expiring is refused (400 invalid-lifetime).
	Pinned *bool `json:"pinned,omitempty"`
}

// MutationJSON is the body of a write's or restore's answer.
type MutationJSON struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// Version is the version written, also sent as the ETag.
	Version string `json:"version"`
	// RestoredFrom is the version a restore wrote back.
	RestoredFrom string `json:"restored_from,omitempty"`
}

func (h *Handler) me(c *call) error {
	return writeJSON(c.w, http.StatusOK, map[string]any{
		"user": c.p.User, "admin": c.p.Admin, "client": c.p.Client, "namespace": c.p.Namespace(),
	})
}

func (h *Handler) readFile(c *call) error {
	f := c.file
	c.w.Header().Set("ETag", ETag(f.Version))
	if inm := c.r.Header.Get("If-None-Match"); inm != "" && matchesAny(inm, f.Version) {
		c.w.WriteHeader(http.StatusNotModified)
		return nil
	}
	sz := size(f.Content)
	return writeJSON(c.w, http.StatusOK, FileJSON{Path: c.relPath, Version: f.Version, Content: f.Content, Metadata: f.Metadata, OperationID: f.OperationID,
		Chars: sz.Chars, Tokens: sz.Tokens, ExpiresAt: expiresAt(f.ExpiresAt), Pinned: f.Pinned})
}

// matchesAny reports whether an If-None-Match list names version (or is
// "*").
func matchesAny(header, version string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if v, ok := versionOfTag(t); t == "*" || ok && v == version {
			return true
		}
	}
	return false
}

// stampMetadata is md with who made the change, refusing the keys the
// API sets itself.
func (c *call) stampMetadata(md map[string]string) (map[string]string, error) {
	for _, k := range []string{UpdatedByKey, ClientKey, store.RestoredFromKey} {
		if _, ok := md[k]; ok {
			return nil, problemOf(http.StatusBadRequest, "invalid-metadata", "metadata key "+k+" is set by the server")
		}
	}
	for k := range md {
		if strings.HasPrefix(k, driver.StoreKeyPrefix) {
			return nil, problemOf(http.StatusBadRequest, "invalid-metadata", "metadata key "+k+" is the store's own: give a file's lifetime with expires and pinned")
		}
	}
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	out[UpdatedByKey] = cmp.Or(c.p.User, "admin")
	if c.p.Client != "" {
		out[ClientKey] = c.p.Client
	}
	return out, nil
}

// writeBody reads a write's content, metadata and lifetime: a JSON
// WriteBody, or the raw text of a text/* body (which keeps the file's
// lifetime).
func (h *Handler) writeBody(c *call) (string, map[string]string, lifetimeEdit, error) {
	mt := mediaType(c.r)
	if mt != "application/json" && !strings.HasPrefix(mt, "text/") {
		return "", nil, lifetimeEdit{}, errMediaType("application/json ({\"content\": …, \"metadata\": {…}, \"expires\": …, \"pinned\": …}) or text/markdown (the content)")
	}
	body, err := h.readBody(c)
	if err != nil {
		return "", nil, lifetimeEdit{}, err
	}
	if mt != "application/json" {
		if !utf8.Valid(body) {
			return "", nil, lifetimeEdit{}, store.ErrInvalidContent
		}
		return string(body), nil, lifetimeEdit{}, nil
	}
	var wb WriteBody
	if err := decodeJSON(body, &wb); err != nil {
		return "", nil, lifetimeEdit{}, err
	}
	if wb.Content == nil {
		return "", nil, lifetimeEdit{}, problemOf(http.StatusBadRequest, "invalid-body", "content is required")
	}
	le, err := parseLifetime(wb.Expires, wb.Pinned, h.s.Now())
	return *wb.Content, wb.Metadata, le, err // a refused lifetime: the rest, for the retry's fingerprint
}

func (h *Handler) writeFile(c *call) error {
	p := c.path
	pc, err := mutationPrecondition(c.r)
	if err != nil {
		return err
	}
	content, md, le, err := h.writeBody(c)
	var refused error // the lifetime's mistake
	if errors.Is(err, store.ErrInvalidLifetime) && le.named {
		refused, err = err, nil
	}
	if err != nil {
		return err
	}
	op, err := c.operation(append([]string{p, pc.ifMatch, pc.ifNoneMatch, content, canonicalMap(md)}, le.fingerprint()...)...)
	if err != nil {
		return err
	}
	var m store.Mutation
	if refused != nil {
		// An absolute expiry may have passed since the original landed:
		// the retry of a write the store recorded replays it.
		if m, err = h.replayOf(c, op, refused); err != nil {
			return err
		}
	} else {
		m, err = h.putFile(c, p, content, md, pc.expected, op, le)
	}
	if errors.Is(err, store.ErrConflict) && !pc.given && !errors.Is(err, store.ErrOperationConflict) {
		return errPreconditionRequired("the file exists", "to create a file that is absent")
	}
	if err != nil {
		return err
	}
	setMutationHeaders(c.w, m.Version, m)
	status := http.StatusOK
	if !m.Existed {
		status = http.StatusCreated
	}
	return writeJSON(c.w, status, MutationJSON{Path: c.rel(p), Version: m.Version})
}

// replayOf is the recorded result of op, or refused when op is nil or was
// never recorded.
func (h *Handler) replayOf(c *call, op *store.Operation, refused error) (store.Mutation, error) {
	if op == nil {
		return store.Mutation{}, refused
	}
	prev, err := h.s.GetOperation(c.r.Context(), *op)
	switch {
	case err != nil:
		return store.Mutation{}, err
	case prev == nil:
		return store.Mutation{}, refused
	}
	return *prev, nil
}

// putFile is the one write path of the API and the pages: it stamps who
// makes the change (UpdatedByKey, ClientKey) on md and writes content to
// the store path p as a compare-and-swap on expected ("" = create only),
// exactly once under op when not nil. The file keeps the expiry and pin of
// version expected but for what le names ([Handler.lifetimeFor]).
func (h *Handler) putFile(c *call, p, content string, md map[string]string, expected string, op *store.Operation, le lifetimeEdit) (store.Mutation, error) {
	meta, err := c.stampMetadata(md)
	if err != nil {
		return store.Mutation{}, err
	}
	ctx := c.r.Context()
	expires, pinned, err := h.lifetimeFor(ctx, c.ns, p, expected, le)
	if err != nil {
		return store.Mutation{}, err
	}
	return h.s.Write(ctx, store.WriteRequest{Path: p, Content: content, Expected: expected, Operation: op, Metadata: meta,
		ExpiresAt: expires, Pinned: pinned})
}

// deletePath is the one delete path of the API and the pages: a
// compare-and-swap on expected, stamped with who made it.
func (h *Handler) deletePath(c *call, p, expected string, op *store.Operation) (store.Mutation, error) {
	meta, err := c.stampMetadata(nil)
	if err != nil {
		return store.Mutation{}, err
	}
	return h.s.Delete(c.r.Context(), store.DeleteRequest{Path: p, Expected: expected, Operation: op, Metadata: meta})
}

// canonicalMap is md as sorted key=value lines, for fingerprints.
func canonicalMap(md map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(md)) {
		b.WriteString(digest(k, md[k]))
	}
	return b.String()
}

func (h *Handler) deleteFile(c *call) error {
	p := c.path
	pc, err := mutationPrecondition(c.r)
	if err != nil {
		return err
	}
	if pc.ifMatch == "" {
		return errPreconditionRequired("a delete names the version it deletes", "")
	}
	op, err := c.operation(p, pc.ifMatch)
	if err != nil {
		return err
	}
	m, err := h.deletePath(c, p, pc.expected, op)
	if err != nil {
		return err
	}
	setMutationHeaders(c.w, "", m)
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// ListJSON is a page of files.
type ListJSON struct {
	// Files is the page, sorted by path.
	Files []ListedFile `json:"files"`
	// NextCursor continues the listing (?cursor=); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListedFile is one listed file.
type ListedFile struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// ExpiresAt is when the file expires (RFC 3339, UTC); absent when it
	// never does.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Pinned reports a pinned file.
	Pinned bool `json:"pinned"`
}

func (h *Handler) listFiles(c *call) error {
	prefix := c.r.URL.Query().Get("prefix")
	if err := store.ValidatePrefix(prefix); err != nil {
		return err
	}
	limit, err := c.limit()
	if err != nil {
		return err
	}
	after, err := readCursor(c, "files")
	if err != nil {
		return err
	}
	full := c.ns + "/" + prefix
	if after != "" && !strings.HasPrefix(after, full) {
		return problemOf(http.StatusBadRequest, "invalid-cursor", "cursor belongs to another prefix")
	}
	entries, more, err := h.listAfter(c.r.Context(), full, after, limit)
	if err != nil {
		return err
	}
	out := ListJSON{Files: []ListedFile{}}
	for _, e := range entries {
		out.Files = append(out.Files, ListedFile{Path: c.rel(e.Path), ExpiresAt: expiresAt(e.ExpiresAt()), Pinned: e.Pinned})
	}
	if more {
		out.NextCursor = makeCursor("files", c.ns, entries[len(entries)-1].Path)
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// listAfter lists up to limit files (with their lifetimes) under prefix
// after after ("" = from the first), and reports whether there are more.
func (h *Handler) listAfter(ctx context.Context, prefix, after string, limit int) ([]store.Entry, bool, error) {
	entries, err := h.s.ListEntries(ctx, prefix, limit+1, store.ListOptions{After: after})
	if err != nil {
		return nil, false, err
	}
	if len(entries) > limit {
		return entries[:limit], true, nil
	}
	return entries, false, nil
}
