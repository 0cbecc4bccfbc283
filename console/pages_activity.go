// The pages of what history tells: the deleted files with their restore
// buttons, and the activity by client and by user (beside the API's
// activity.go).

package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentmem/agentmem/core/store"
)

// Page bounds of the history's pages.
const (
	pageDeleted  = 100 // deleted files listed on a page
	pageActivity = 50  // recent changes on the activity page
)

// historyOff is what the history's pages say when the store records no
// history (Unsupported: its backend keeps none), with how to turn it on.
type historyOff struct {
	Unsupported, Off bool
}

// historyState is what a page tells of a history scan that failed with
// err (nil for none) on a store recording history or not: that the
// backend keeps none (errHistoryOff), that recording is off, or err.
func historyState(err error, recording bool) (historyOff, error) {
	switch {
	case errors.Is(err, errHistoryOff):
		return historyOff{Unsupported: true}, nil
	case err != nil:
		return historyOff{}, err
	}
	return historyOff{Off: !recording}, nil
}

type deletedRow struct {
	DeletedJSON
	By, Client string
	// Why is the delete's other metadata (retention, run_id, …) as
	// "key=value" pairs.
	Why string
	// Token makes the row's restore form apply once.
	Token string
}

type deletedData struct {
	historyOff
	Rows      []deletedRow
	Next      string
	Truncated bool
}

// whyOf is md without who made the change, as "key=value, …" in key
// order.
func whyOf(md map[string]string) string {
	var parts []string
	for _, kv := range sortedMeta(md) {
		if kv[0] != UpdatedByKey && kv[0] != ClientKey {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}

// deletedPage lists the files of the namespace deleted while history was
// kept, the newest delete first, each with a restore form: the history
// page's restore (POST /ns/{ns}/restore) of the version the delete
// replaced, over no file, exactly once per render.
func (h *Handler) deletedPage(pc *pageCall) error {
	page, next, err := h.pageOfDeleted(pc.call, pageDeleted)
	d := deletedData{Rows: []deletedRow{}, Truncated: page.Truncated}
	if d.historyOff, err = historyState(err, page.Recording); err != nil {
		return err
	}
	for _, f := range page.Files {
		row := deletedRow{DeletedJSON: f, By: f.Metadata[UpdatedByKey], Client: f.Metadata[ClientKey], Why: whyOf(f.Metadata), Token: formToken()}
		if row.By == store.ExpiryUpdatedBy && row.Why == "" {
			row.Why = "expired"
		}
		d.Rows = append(d.Rows, row)
	}
	if c := makeCursor("deleted", pc.ns, next); c != "" {
		d.Next = pc.nsURL("deleted") + "?cursor=" + url.QueryEscape(c)
	}
	h.render(pc.w, pc.r, http.StatusOK, "deleted", pc.data("Deleted in "+pc.ns, d))
	return nil
}

type activityData struct {
	historyOff
	ActivityJSON
	ByClient, ByUser countsTable
	Recent           []historyRow
}

// countsTable is one table of the activity's counts.
type countsTable struct {
	Rows     []CountJSON
	Base, NS string
	Kind     string // client or user
}

// activityPage shows the namespace's changes counted by client and by
// user, and the newest ones.
func (h *Handler) activityPage(pc *pageCall) error {
	a, err := h.activityOf(pc.call, pageActivity)
	d := activityData{ActivityJSON: a}
	if d.historyOff, err = historyState(err, a.Recording); err != nil {
		return err
	}
	d.ByClient = countsTable{Rows: a.Clients, Base: pc.base, NS: pc.ns, Kind: "client"}
	d.ByUser = countsTable{Rows: a.Users, Base: pc.base, NS: pc.ns, Kind: "user"}
	for _, e := range a.Recent {
		d.Recent = append(d.Recent, newHistoryRow(e, clientOf(e.Metadata)))
	}
	h.render(pc.w, pc.r, http.StatusOK, "activity", pc.data("Activity in "+pc.ns, d))
	return nil
}
