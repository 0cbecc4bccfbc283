// The history's pages: a file's or the namespace's changes, a version, a
// diff and restoring (beside the API's history.go).

package console

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmem/agentmem/core/store"
)

type historyRow struct {
	EntryJSON
	By, Client string
	DiffURL    string
	// First marks a file's first (newest) row on the page.
	First bool
	// Expired marks the delete that recorded the file's expiry (by
	// store.ExpiryUpdatedBy); Life the lifetime a write gave the file
	// (lifetimeLabel).
	Expired bool
	Life    string
}

// newHistoryRow is the row of change e, made through client.
func newHistoryRow(e EntryJSON, client string) historyRow {
	r := historyRow{EntryJSON: e, By: e.Metadata[UpdatedByKey], Client: client}
	r.Expired = e.Kind == "delete" && r.By == store.ExpiryUpdatedBy
	if e.Kind != "delete" {
		var at time.Time
		if e.ExpiresAt != nil {
			at = *e.ExpiresAt
		}
		r.Life = lifetimeLabel(at, e.Pinned)
	}
	return r
}

type historyData struct {
	Path string // "" for the namespace's history
	Rows []historyRow
	// Next is the URL of the next page of this history, "" on the last.
	Next    string
	Current string
}

// historyPage lists the changes of one file (with a path) or of the whole
// namespace in the API's order (GET …/history, agentmem log --prefix): by
// path, and newest first within each file; pageHistory a page, the next
// page behind the API's cursor.
func (h *Handler) historyPage(pc *pageCall) error {
	ctx, rel := pc.r.Context(), pc.relPath
	req := store.HistoryRequest{Prefix: pc.ns + "/", Limit: pageHistory}
	kind := "history"
	if pc.path != "" {
		req.Path, kind = pc.path, "history:"+pc.path
	}
	var err error
	if req.After, err = readCursor(pc.call, kind); err != nil {
		return err
	}
	page, err := h.s.History(ctx, req)
	if err != nil {
		return err
	}
	d := historyData{Path: rel}
	if c := makeCursor(kind, pc.ns, page.Next); c != "" {
		d.Next = pc.nsURL("history", rel) + "?cursor=" + url.QueryEscape(c)
		if rel == "" {
			d.Next = pc.nsURL("history") + "/?cursor=" + url.QueryEscape(c)
		}
	}
	for i := range page.Entries {
		e := pc.entry(&page.Entries[i])
		row := newHistoryRow(e, e.Metadata[ClientKey])
		if e.Previous != "" && e.Kind != "delete" {
			row.DiffURL = pc.nsURL("diff", e.Path) + "?from=" + url.QueryEscape(e.Previous) + "&to=" + url.QueryEscape(e.Version)
		}
		row.First = i == 0 || page.Entries[i-1].Path != page.Entries[i].Path
		d.Rows = append(d.Rows, row)
	}
	title := "History of " + pc.ns
	if rel != "" {
		title = "History of " + rel
		if f, err := h.s.Read(ctx, req.Path, 1); err == nil {
			d.Current = f.Version
		}
	}
	h.render(pc.w, pc.r, http.StatusOK, "history", pc.data(title, d))
	return nil
}

type versionData struct {
	EntryJSON
	Content, Current, Token string
	Metadata                [][2]string
	IsCurrent, Absent       bool
}

func (h *Handler) versionPage(pc *pageCall) error {
	ctx, rel, p := pc.r.Context(), pc.relPath, pc.path
	v := pc.r.URL.Query().Get("v")
	if v == "" {
		return badForm("v is required: a version from the file's history")
	}
	e, err := h.s.ReadVersion(ctx, p, v)
	if err != nil {
		return err
	}
	d := versionData{EntryJSON: pc.entry(e), Content: e.Content, Token: formToken(), Metadata: sortedMeta(e.Metadata)}
	f, err := h.s.Read(ctx, p, 1)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.Absent = true
	case err != nil:
		return err
	default:
		d.Current, d.IsCurrent = f.Version, f.Version == e.Version
	}
	h.render(pc.w, pc.r, http.StatusOK, "version", pc.data(rel+" @ "+v, d))
	return nil
}

type diffData struct {
	DiffJSON
	Lines []diffLine
}

func (h *Handler) diffPage(pc *pageCall) error {
	rel := pc.relPath
	q := pc.r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if from == "" {
		return badForm("pick the version to compare from")
	}
	d, err := h.diffOf(pc.call, from, to)
	if err != nil {
		return err
	}
	dd := diffData{DiffJSON: d}
	if d.Diff != "" {
		dd.Lines = diffLines(d.Diff)
	}
	h.render(pc.w, pc.r, http.StatusOK, "diff", pc.data("Diff of "+rel, dd))
	return nil
}

// restoreForm writes a past version back as a compare-and-swap on the
// version the page showed as current ("" when the file was absent),
// exactly once per form render.
func (h *Handler) restoreForm(pc *pageCall) error {
	rel, p := pc.relPath, pc.path
	version, current := pc.r.PostFormValue("version"), pc.r.PostFormValue("current")
	if version == "" {
		return badForm("the form lacks the version to restore")
	}
	op, err := pc.formOp("restore", p, version, current)
	if err != nil {
		return err
	}
	if _, err := h.restorePath(pc.call, p, version, current, op); errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		return problemOf(http.StatusConflict, "precondition-failed", "the file changed since you opened this version; nothing was restored: open its history again")
	} else if err != nil {
		return err
	}
	pc.redirectNS("Restored version "+shortVersion(version)+".", nil, "files", rel)
	return nil
}
