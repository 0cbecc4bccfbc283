// The notebook's pages: its files, a file, the editor, the conflict view
// and deleting (beside the API's files.go).

package console

import (
	"cmp"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/core/store"
)

type fileRow struct {
	Path, Version, By, Client string
	// Size is the whole file's, in characters and estimated tokens.
	Size PartJSON
	// Life marks a pinned or expiring file (lifetimeLabel), Pinned a
	// pinned one.
	Life   string
	Pinned bool
}

type notebookData struct {
	Files    []fileRow
	Next     string
	Snapshot string
	Instr    string
	// Budget is how the instructions and Snapshot spend the token budget.
	Budget *BudgetJSON
	// ImportToken makes the import form's submit exactly once.
	ImportToken string
	// Consolidate shows the "Consolidate now" form (Options.Consolidator
	// is set); ConsolidateToken makes its Apply exactly once.
	Consolidate      bool
	ConsolidateToken string
}

func (h *Handler) notebookPage(pc *pageCall) error {
	ctx := pc.r.Context()
	after := ""
	if a := pc.r.URL.Query().Get("after"); a != "" {
		p, err := pc.storePath(a)
		if err != nil {
			return err
		}
		after = p
	}
	entries, more, err := h.listAfter(ctx, pc.ns+"/", after, pageFiles)
	if err != nil {
		return err
	}
	d := notebookData{Files: []fileRow{}, ImportToken: formToken(), Consolidate: h.model != nil}
	if d.Consolidate {
		d.ConsolidateToken = formToken()
	}
	for _, e := range entries {
		f, err := h.s.Read(ctx, e.Path, wholeFile)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		d.Files = append(d.Files, fileRow{Path: pc.rel(e.Path), Version: f.Version, By: f.Metadata[UpdatedByKey],
			Client: f.Metadata[ClientKey], Size: size(f.Content), Life: lifetimeLabel(f.ExpiresAt, f.Pinned), Pinned: f.Pinned})
	}
	if more {
		d.Next = pc.nsURL() + "/?after=" + url.QueryEscape(pc.rel(entries[len(entries)-1].Path))
	}
	b, err := h.mem.Budget(ctx, pc.ns)
	if err != nil {
		return err
	}
	d.Snapshot, d.Budget, d.Instr = b.Block, budgetJSON(b), h.mem.Instructions()
	h.render(pc.w, pc.r, http.StatusOK, "notebook", pc.data(pc.ns, d))
	return nil
}

type fileData struct {
	Path, Version, Content string
	Metadata               [][2]string
	// Raw shows Content as text (?view=raw); otherwise HTML is the note
	// rendered as Markdown, and Dropped says it held raw HTML, which is
	// not shown.
	Raw     bool
	HTML    template.HTML
	Dropped bool
	// Life is the file's expiry and pin, and the form that sets them.
	Life lifetimeData
}

func sortedMeta(md map[string]string) [][2]string {
	var out [][2]string
	for k, v := range md {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	return out
}

func (h *Handler) filePage(pc *pageCall) error { return h.showFile(pc, http.StatusOK, "") }

// showFile renders the file page of pc.file with status, and lifeErr
// (when not "") saying why its lifetime form was refused.
func (h *Handler) showFile(pc *pageCall, status int, lifeErr string) error {
	f, rel := pc.file, pc.relPath
	d := fileData{Path: rel, Version: f.Version, Content: f.Content, Metadata: sortedMeta(f.Metadata), Raw: pc.r.URL.Query().Get("view") == "raw",
		Life: h.lifetimeOf(pc, f)}
	d.Life.Error = lifeErr
	if !d.Raw {
		var err error
		if d.HTML, d.Dropped, err = renderMarkdown(f.Content); err != nil {
			return err
		}
	}
	h.render(pc.w, pc.r, status, "file", pc.data(rel, d))
	return nil
}

// editData is the editor's form: Version is the version the page was
// rendered from ("" for a new file), the compare-and-swap of the save.
type editData struct {
	New                           bool
	Path, Version, Content, Token string
	Error                         string
	// Life marks a pinned or expiring file (lifetimeLabel): the save
	// keeps it.
	Life string
}

func (h *Handler) editPage(pc *pageCall) error {
	f, rel := pc.file, pc.relPath
	h.render(pc.w, pc.r, http.StatusOK, "edit", pc.data("Edit "+rel, editData{Path: rel, Version: f.Version, Content: f.Content, Token: formToken(),
		Life: lifetimeLabel(f.ExpiresAt, f.Pinned)}))
	return nil
}

func (h *Handler) newPage(pc *pageCall) error {
	h.render(pc.w, pc.r, http.StatusOK, "edit", pc.data("New file", editData{New: true, Path: h.agent + "/", Token: formToken()}))
	return nil
}

// conflictData is the conflict view: the text submitted (kept in the
// form, now against the current version), the current text, and the
// difference from theirs to yours.
type conflictData struct {
	Path, Yours, Theirs, Version, Token, By string
	Deleted                                 bool
	Diff                                    []diffLine
	// Merge is the three-way merge of the version the edit started from,
	// yours and theirs, when that version could be read; NoMerge says why
	// not when it could not.
	Merge   *mergeData
	NoMerge string
}

// save writes the editor's text as a compare-and-swap on the version the
// form was rendered from, exactly once per form render.
func (h *Handler) save(pc *pageCall) error {
	r := pc.r
	rel := strings.TrimSpace(r.PostFormValue("path"))
	content := formText(r.PostFormValue("content"))
	version := r.PostFormValue("version")
	isNew := r.PostFormValue("new") == "1"
	again := func(status int, msg string) error {
		h.render(pc.w, r, status, "edit", pc.data("Edit "+rel, editData{New: isNew, Path: rel, Version: version, Content: content, Token: formToken(), Error: msg}))
		return nil
	}
	p, err := pc.storePath(rel)
	if err != nil {
		return again(http.StatusBadRequest, "The path is not valid: use \"/\"-separated segments of letters, digits, \"_\", \".\" and \"-\" (such as main/notes.md).")
	}
	if r.PostFormValue("merge") == "1" {
		if msg := unresolved(content); msg != "" {
			return again(http.StatusUnprocessableEntity, msg)
		}
	}
	op, err := pc.formOp("save", p, version, content)
	if err != nil {
		return err
	}
	_, err = h.putFile(pc.call, p, content, nil, version, op, lifetimeEdit{}) // keeps the expiry and pin
	switch {
	case errors.Is(err, store.ErrOperationConflict):
		return again(http.StatusConflict, "This form was already submitted with other text. Your text is below: save it again.")
	case errors.Is(err, store.ErrConflict):
		return h.conflict(pc, rel, p, version, content)
	case errors.Is(err, store.ErrTooLarge), errors.As(err, new(*http.MaxBytesError)):
		return again(http.StatusRequestEntityTooLarge, "The text is over the store's size limit; nothing was saved.")
	case errors.Is(err, store.ErrPathCollision):
		return again(http.StatusConflict, "A file and a folder would share that name; pick another path.")
	case errors.Is(err, store.ErrInvalidContent), errors.Is(err, store.ErrInvalidPath):
		return again(http.StatusBadRequest, "The path or the text is not valid; nothing was saved.")
	case err != nil:
		return err
	}
	pc.redirectNS("Saved.", nil, "files", rel)
	return nil
}

// conflict renders the conflict view (409): the file changed since the
// editor was rendered from version base ("" for a new file); the
// submitted text stays in the form, beside its merge with theirs.
func (h *Handler) conflict(pc *pageCall, rel, p, base, yours string) error {
	d := conflictData{Path: rel, Yours: yours, Token: formToken()}
	f, err := h.s.Read(pc.r.Context(), p, wholeFile)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.Deleted = true
	case err != nil:
		return err
	default:
		d.Theirs, d.Version, d.By = f.Content, f.Version, f.Metadata[UpdatedByKey]
		if base != "" {
			d.Merge, d.NoMerge = h.mergeFor(pc, p, base, yours, f.Content)
		}
	}
	if u := unifiedDiff(rel+" (theirs)", rel+" (yours)", d.Theirs, d.Yours); u != "" {
		d.Diff = diffLines(u)
	}
	h.render(pc.w, pc.r, http.StatusConflict, "conflict", pc.data("Conflict on "+rel, d))
	return nil
}

// deleteData is the delete confirmation: the file as it is now, and the
// form that deletes that version.
type deleteData struct {
	Path, Version, Content, Token string
	// History says the store keeps history: a deleted file can be
	// restored from it.
	History bool
}

// deletePage asks to confirm the delete of a file, showing what it holds
// and whether it can be restored afterwards; the file page's Delete links
// here.
func (h *Handler) deletePage(pc *pageCall) error {
	f, rel := pc.file, pc.relPath
	d := deleteData{Path: rel, Version: f.Version, Content: f.Content, Token: formToken(), History: h.keepsHistory(pc, pc.path, f.Version)}
	h.render(pc.w, pc.r, http.StatusOK, "delete", pc.data("Delete "+rel, d))
	return nil
}

// keepsHistory reports whether the store's history recorded version of p,
// the current one or the one just deleted (so among its newest two
// entries): then a delete of that version can be undone by restoring it.
func (h *Handler) keepsHistory(pc *pageCall, p, version string) bool {
	page, err := h.s.History(pc.r.Context(), store.HistoryRequest{Path: p, Limit: 2})
	return err == nil && slices.ContainsFunc(page.Entries, func(e store.HistoryEntry) bool { return e.Version == version && !e.Deleted })
}

// deleteForm deletes the version of a file its confirmation showed
// (confirm=1), exactly once per form render; without confirm=1 (a form of
// an older page) it shows the confirmation instead. The notebook then
// says what was deleted and links to the version to restore, when the
// store keeps history.
func (h *Handler) deleteForm(pc *pageCall) error {
	rel, p := pc.relPath, pc.path
	if pc.r.PostFormValue("confirm") != "1" {
		f, err := h.s.Read(pc.r.Context(), p, wholeFile)
		if err != nil {
			return err
		}
		pc.file = f
		return h.deletePage(pc)
	}
	version := pc.r.PostFormValue("version")
	if version == "" {
		return badForm("the form lacks the version it deletes: reload the file and delete again")
	}
	op, err := pc.formOp("delete", p, version)
	if err != nil {
		return err
	}
	if _, err := h.deletePath(pc.call, p, version, op); errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		return problemOf(http.StatusConflict, "precondition-failed", "the file changed since you opened it; nothing was deleted: open it again")
	} else if err != nil {
		return err
	}
	if h.keepsHistory(pc, p, version) {
		pc.redirectNS("Deleted "+rel+".", &flashLink{URL: pc.nsURL("versions", rel) + "?v=" + url.QueryEscape(version), Label: "Restore it from its history"})
	} else {
		pc.redirectNS("Deleted "+rel+". This store keeps no history of it, so it cannot be restored.", nil)
	}
	return nil
}
