package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/core/store"
)

// ProblemTypePrefix starts the type of every problem the API reports
// (RFC 9457): "urn:agentmem:problem:" plus a slug such as
// "precondition-failed". The slugs are listed in the OpenAPI document.
const ProblemTypePrefix = "urn:agentmem:problem:"

// Problem is an RFC 9457 problem details object, the body of every error
// response (Content-Type application/problem+json).
type Problem struct {
	// Type identifies the kind of problem: ProblemTypePrefix + slug.
	Type string `json:"type"`
	// Title is a short summary of the kind.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Detail says what happened and what to fix.
	Detail string `json:"detail,omitempty"`
	// Extra holds extension members (forget's counts); nil for none.
	Extra map[string]any `json:"-"`
}

// Error returns the title and the detail.
func (p *Problem) Error() string { return p.Title + ": " + p.Detail }

// MarshalJSON writes the members and the extensions side by side.
func (p *Problem) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": p.Type, "title": p.Title, "status": p.Status}
	if p.Detail != "" {
		m["detail"] = p.Detail
	}
	for k, v := range p.Extra {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// problemTitles are the titles of the problem slugs.
var problemTitles = map[string]string{
	"unauthenticated":              "Authentication required",
	"admin-required":               "Admin principal required",
	"namespace-not-found":          "Namespace not found",
	"invalid-namespace":            "Invalid namespace",
	"not-found":                    "Not found",
	"no-such-route":                "No such route",
	"method-not-allowed":           "Method not allowed",
	"invalid-path":                 "Invalid path",
	"invalid-parameter":            "Invalid parameter",
	"invalid-cursor":               "Invalid cursor",
	"invalid-body":                 "Invalid request body",
	"invalid-content":              "Invalid content",
	"invalid-metadata":             "Invalid metadata",
	"invalid-lifetime":             "Invalid file lifetime",
	"invalid-precondition":         "Invalid precondition header",
	"invalid-idempotency-key":      "Invalid Idempotency-Key",
	"unsupported-media-type":       "Unsupported media type",
	"precondition-failed":          "Precondition failed",
	"precondition-required":        "Precondition required",
	"idempotency-key-reused":       "Idempotency-Key reused with another request",
	"path-collision":               "A file and a folder would share a name",
	"too-large":                    "Too large",
	"confirmation-required":        "Confirmation required",
	"forget-incomplete":            "Files changed while forgetting",
	"archive-refused":              "Archive refused",
	"import-incomplete":            "Files differ from the archive",
	"history-unsupported":          "History unsupported",
	"consolidation-not-configured": "Consolidation not configured",
	"model-failed":                 "The consolidation model failed",
	"model-answer-invalid":         "The consolidation model's answer was invalid",
	"consolidation-state-invalid":  "Consolidation state invalid",
	"consolidation-busy":           "Consolidation busy",
	"unavailable":                  "Unavailable",
	"internal":                     "Internal server error",
}

// problemOf is the problem of status and slug with detail.
func problemOf(status int, slug, detail string) *Problem {
	return &Problem{Type: ProblemTypePrefix + slug, Title: problemTitles[slug], Status: status, Detail: detail}
}

// fail answers c with the problem err maps to.
func (h *Handler) fail(c *call, err error) {
	p := h.problemFor(c, err)
	if p.Status == http.StatusUnauthorized {
		v := `Bearer realm="agentmem"`
		if h.resMeta != "" {
			v += `, resource_metadata=` + strconv.Quote(h.resMeta)
		}
		c.w.Header().Set("WWW-Authenticate", v)
	}
	h.problem(c.w, c.rt.op, p)
}

// problemFor maps err: a *Problem as it is, the store's sentinels to their
// statuses, anything else to 500 (logged, its text never shown).
func (h *Handler) problemFor(c *call, err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var mbe *http.MaxBytesError
	detail := err.Error()
	switch {
	case errors.As(err, &mbe):
		return problemOf(http.StatusRequestEntityTooLarge, "too-large", "the request body is over "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
	case errors.Is(err, store.ErrOperationConflict):
		return problemOf(http.StatusUnprocessableEntity, "idempotency-key-reused", "this Idempotency-Key was used for another request (method, path, body or preconditions): use a new key for a new request")
	case errors.Is(err, store.ErrConflict):
		return problemOf(http.StatusPreconditionFailed, "precondition-failed", "the file's version is not the one If-Match or If-None-Match named; nothing was written: GET it again and retry with its ETag")
	case errors.Is(err, store.ErrNotFound):
		return problemOf(http.StatusNotFound, "not-found", c.relText(detail))
	case errors.Is(err, store.ErrPathCollision):
		return problemOf(http.StatusConflict, "path-collision", c.relText(detail))
	case errors.Is(err, store.ErrInvalidPath), errors.Is(err, store.ErrPathEscape):
		return problemOf(http.StatusBadRequest, "invalid-path", "paths are \"/\"-separated segments of 1-200 characters of [A-Za-z0-9_.-], none \".\", none containing \"..\", none starting with \".agentmem\"")
	case errors.Is(err, store.ErrInvalidContent):
		return problemOf(http.StatusBadRequest, "invalid-content", "content must be valid UTF-8 text")
	case errors.Is(err, store.ErrInvalidLifetime):
		return lifetimeProblem(err)
	case errors.Is(err, store.ErrInvalidMetadata):
		return problemOf(http.StatusBadRequest, "invalid-metadata", "metadata values must hold no NUL and the map must be at most 4,096 characters as JSON")
	case errors.Is(err, store.ErrInvalidBound):
		return problemOf(http.StatusBadRequest, "invalid-parameter", c.relText(detail))
	case errors.Is(err, store.ErrTooLarge):
		return problemOf(http.StatusRequestEntityTooLarge, "too-large", "the file is over the backend's item size limit")
	case errors.Is(err, store.ErrHistoryUnsupported):
		return problemOf(http.StatusNotImplemented, "history-unsupported", "this store's backend keeps no history")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return problemOf(http.StatusServiceUnavailable, "unavailable", "the request was canceled or timed out before the store answered; retry it (with the same Idempotency-Key)")
	}
	attrs := []any{"op", c.rt.op, "error_kind", store.ErrorKind(err)}
	if h.logDetails {
		attrs = append(attrs, "error", err)
	}
	h.log.ErrorContext(c.r.Context(), "agentmem/console: request failed", attrs...)
	return problemOf(http.StatusInternalServerError, "internal", "the server failed to answer; the error is in its log")
}

// relText is a store error's text (which names the full path) as the
// caller sees paths: relative to its namespace.
func (c *call) relText(s string) string {
	if c.ns == "" {
		return s
	}
	return strings.ReplaceAll(s, `"`+c.ns+`/`, `"`)
}

// problem writes p as application/problem+json.
func (h *Handler) problem(w http.ResponseWriter, op string, p *Problem) {
	b, err := json.Marshal(p)
	if err != nil {
		b = []byte(`{"type":"` + ProblemTypePrefix + `internal","title":"Internal server error","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(append(b, '\n'))
	if op == "" && h.observe != nil {
		h.observe("", p.Status)
	}
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) // the client is gone if this fails
	return nil
}
