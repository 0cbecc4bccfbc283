package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/agentmem/agentmem/core/archive"
	"github.com/agentmem/agentmem/core/store"
)

// ImportJSON is what an import did.
type ImportJSON struct {
	// Namespace is the namespace imported into.
	Namespace string `json:"namespace"`
	// Created counts the files that were absent and were written.
	Created int `json:"created"`
	// Replaced counts the files that differed and were replaced (?force=1).
	Replaced int `json:"replaced"`
	// Unchanged counts the files that already held the archive's content.
	Unchanged int `json:"unchanged"`
	// Replayed counts the writes answered from an earlier request with the
	// same Idempotency-Key (also counted as created or replaced).
	Replayed int `json:"replayed"`
	// Differ lists the files (relative to the namespace) that differ from
	// the archive and were left as they are; then the status is 409.
	Differ []string `json:"differ"`
}

// importNamespace reads the archive of agentmem export (or of the export
// route) from the body into the namespace. Admins import into any
// namespace, a user principal into its own; every path of the archive
// must lie in the namespace. ?force=1 replaces files that differ.
func (h *Handler) importNamespace(c *call) error {
	if mt := mediaType(c.r); mt != "application/x-tar" {
		return errMediaType("application/x-tar (the archive of agentmem export or GET …/export)")
	}
	force, err := queryBool(c.r, "force")
	if err != nil {
		return err
	}
	op, err := c.operation(c.r.URL.Path, strconv.FormatBool(force))
	if err != nil {
		return err
	}
	out, err := h.importArchive(c, c.r.Body, force, op)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// queryBool reads the boolean parameter name: absent, 0 or false, 1 or
// true.
func queryBool(r *http.Request, name string) (bool, error) {
	switch r.URL.Query().Get(name) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, problemOf(http.StatusBadRequest, "invalid-parameter", name+" must be 1 or 0")
}

// importArchive is the one import path of the API and the pages: it
// imports the archive r into c's namespace with core/archive (checked
// whole first, compare-and-swap on every write, exactly once under op
// when not nil), each file stamped with who imported it. A refused
// archive is a 422 problem and writes nothing; files that differ (without
// force) a 409 problem holding the counts.
func (h *Handler) importArchive(c *call, r io.Reader, force bool, op *store.Operation) (ImportJSON, error) {
	meta, err := c.stampMetadata(nil)
	if err != nil {
		return ImportJSON{}, err
	}
	st, err := archive.Import(c.r.Context(), h.s, r, &archive.ImportOptions{
		Prefix: c.ns + "/", Force: force, Operation: op, Metadata: meta, MaxBytes: h.maxImport})
	out := ImportJSON{Namespace: c.ns, Created: st.Created, Replaced: st.Replaced, Unchanged: st.Unchanged, Replayed: st.Replayed, Differ: []string{}}
	for _, p := range st.Differ {
		out.Differ = append(out.Differ, c.rel(p))
	}
	counts := func(p *Problem) *Problem {
		p.Extra = map[string]any{"created": out.Created, "replaced": out.Replaced, "unchanged": out.Unchanged, "replayed": out.Replayed, "differ": out.Differ}
		return p
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, archive.ErrTooLarge), errors.As(err, &mbe):
		return out, problemOf(http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf("the archive is over %d bytes; nothing was written", h.maxImport))
	case errors.Is(err, archive.ErrEmpty), errors.Is(err, archive.ErrNotArchive), errors.Is(err, archive.ErrDamaged), errors.Is(err, archive.ErrOutsidePrefix):
		return out, problemOf(http.StatusUnprocessableEntity, "archive-refused", err.Error())
	case errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict):
		// The problem keeps its cause: the import page words it itself.
		return out, fmt.Errorf("%w: %w", counts(problemOf(http.StatusConflict, "import-incomplete", "a file changed while it was being imported; what was written stays: send the request again")), err)
	case err != nil:
		return out, err
	case len(out.Differ) > 0:
		return out, counts(problemOf(http.StatusConflict, "import-incomplete", fmt.Sprintf("%d files differ from the archive and were left as they are: send it again with ?force=1 to replace them", len(out.Differ))))
	}
	return out, nil
}

// importForm imports the archive uploaded by the notebook page's form
// (multipart: token, force, then the archive), exactly once per form
// render, and shows what it did. The parts are read as they come, the
// archive spooled by core/archive within MaxImportBytes.
func (h *Handler) importForm(pc *pageCall) error {
	pc.r.Body = http.MaxBytesReader(pc.w, pc.r.Body, h.maxImport+1<<20)
	mr, err := pc.r.MultipartReader()
	if err != nil {
		return badForm("send the import form (multipart/form-data with the archive)")
	}
	var token string
	force := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return badForm("the form holds no archive: choose the .tar file an export gave")
		}
		if err != nil {
			return badForm("the upload is not a readable form: " + err.Error())
		}
		switch part.FormName() {
		case "token", "force":
			v, err := io.ReadAll(io.LimitReader(part, MaxIdempotencyKeyChars+1))
			if err != nil {
				return badForm("the upload is not a readable form: " + err.Error())
			}
			if part.FormName() == "token" {
				token = string(v)
			} else {
				force = string(v) == "1"
			}
		case "archive":
			if token == "" || len(token) > MaxIdempotencyKeyChars {
				return badForm("the form lacks its token: reload the page and submit again")
			}
			op := pc.operationFor("form:"+token, "import", strconv.FormatBool(force))
			out, err := h.importArchive(pc.call, part, force, op)
			var p *Problem
			status := http.StatusOK
			if errors.As(err, &p) && p.Status == http.StatusConflict {
				status = http.StatusConflict
			} else if err != nil {
				return err
			}
			d := importData{Result: &out, Force: force}
			if errors.Is(err, store.ErrConflict) {
				// In the page's own terms; files that differ the page
				// lists itself, never in the API's words.
				d.Error = "A file changed while the archive was being imported; what was written stays. Import the archive again to finish."
			}
			h.render(pc.w, pc.r, status, "imported", pc.data("Imported into "+pc.ns, d))
			return nil
		}
	}
}

type importData struct {
	Result *ImportJSON
	Force  bool
	Error  string
}
