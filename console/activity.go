// What a namespace's history tells beyond its list of changes: the files
// deleted while it was kept (to restore them) and who has been writing,
// through which client (beside the pages' pages_activity.go).

package console

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// MaxHistoryScan bounds the changes one deleted-files or activity request
// reads from a namespace's history (and the namespaces' last change): past
// it the answer says truncated. The history is kept for its retention (30
// days by default), so a namespace rarely has this many.
const MaxHistoryScan = 100_000

// historyScanLimit is MaxHistoryScan; tests lower it.
var historyScanLimit = MaxHistoryScan

// historyScanPage is the size of each History request of a scan.
const historyScanPage = 500

// eachChange calls fn with every recorded change of ns's files, in the
// history's order (by path, newest first within a file), and reports
// whether it stopped at historyScanLimit. It fails with
// store.ErrHistoryUnsupported when the backend keeps no history.
func (h *Handler) eachChange(ctx context.Context, ns string, fn func(*store.HistoryEntry)) (truncated bool, err error) {
	req := store.HistoryRequest{Prefix: ns + "/", Limit: min(historyScanPage, historyScanLimit)}
	n := 0
	for {
		page, err := h.s.History(ctx, req)
		if err != nil {
			return false, err
		}
		for i := range page.Entries {
			if n == historyScanLimit {
				return true, nil
			}
			n++
			fn(&page.Entries[i])
		}
		if page.Next == "" {
			return false, nil
		}
		req.After = page.Next
	}
}

// errHistoryOff is the problem of a store whose backend keeps no history,
// with how to get one that does.
var errHistoryOff = problemOf(http.StatusNotImplemented, "history-unsupported",
	"this store's backend keeps no history: serve a store on a backend that keeps it (every built-in one does), with ?history=on in the store URL")

// historyErr maps a scan's store.ErrHistoryUnsupported to errHistoryOff.
func historyErr(err error) error {
	if errors.Is(err, store.ErrHistoryUnsupported) {
		return errHistoryOff
	}
	return err
}

// DeletedJSON is a file deleted while history was kept, and absent now.
type DeletedJSON struct {
	// Path is relative to the namespace.
	Path string `json:"path"`
	// Version is the delete's own version (its history entry).
	Version string `json:"version"`
	// Previous is the version the delete replaced: restore it
	// (restoreVersion with If-None-Match: *) to bring the file back.
	Previous string `json:"previous"`
	// Time is when the file was deleted (RFC 3339, UTC).
	Time *time.Time `json:"time,omitempty"`
	// OperationID is the delete's operation, if it had one.
	OperationID string `json:"operation_id,omitempty"`
	// Metadata is the delete's metadata: who (updated_by), through what
	// (client) and why (retention, run_id, tool_call_id, …).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Restorable reports that the history still holds the content of
	// Previous (it has not expired, and was written while history was
	// kept).
	Restorable bool `json:"restorable"`
	// Chars is the size of that content in characters, 0 when not
	// restorable.
	Chars int `json:"chars"`
}

// DeletedPageJSON is a page of deleted files.
type DeletedPageJSON struct {
	// Files is the page, the newest delete first.
	Files []DeletedJSON `json:"files"`
	// NextCursor continues the listing (?cursor=); absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	// Recording reports that the store records the history of the changes
	// it makes now (store.Store.HistoryRetention): when false, what is
	// listed was recorded earlier, and a file deleted now cannot be
	// restored. Turn it on with ?history=on in the store URL.
	Recording bool `json:"recording"`
	// Truncated reports that the namespace's history holds more than
	// MaxHistoryScan changes, of which only the first were read.
	Truncated bool `json:"truncated"`
}

// deletedKey orders deleted files: the newest delete first, then by path.
func deletedKey(d *DeletedJSON) string {
	var t time.Time
	if d.Time != nil {
		t = *d.Time
	}
	return t.UTC().Format(time.RFC3339Nano) + " " + d.Path
}

func compareDeleted(a, b *DeletedJSON) int {
	ta, tb := time.Time{}, time.Time{}
	if a.Time != nil {
		ta = *a.Time
	}
	if b.Time != nil {
		tb = *b.Time
	}
	return cmp.Or(tb.Compare(ta), cmp.Compare(a.Path, b.Path))
}

// deletedFiles lists up to limit files of c's namespace whose newest
// recorded change is a delete and that are absent now, the newest delete
// first, after the position after (nil = from the first); next is the
// position of the page's last file when more follow.
func (h *Handler) deletedFiles(c *call, after *DeletedJSON, limit int) (out DeletedPageJSON, next string, err error) {
	ctx := c.r.Context()
	var cands []DeletedJSON
	var cur *DeletedJSON // the newest change of the path being read, when a delete
	path := ""
	out.Truncated, err = h.eachChange(ctx, c.ns, func(e *store.HistoryEntry) {
		if e.Path != path {
			path, cur = e.Path, nil
			if e.Deleted {
				d := DeletedJSON{Path: c.rel(e.Path), Version: e.Version, Previous: e.Previous, OperationID: e.OperationID, Metadata: e.Metadata}
				if !e.Time.IsZero() {
					t := e.Time.UTC()
					d.Time = &t
				}
				cands = append(cands, d)
				cur = &cands[len(cands)-1]
			}
			return
		}
		if cur != nil && !e.Deleted && e.Version == cur.Previous {
			cur.Restorable, cur.Chars = true, utf8.RuneCountInString(e.Content)
		}
	})
	if err != nil {
		return out, "", historyErr(err)
	}
	out.Recording = h.s.HistoryRetention() > 0
	out.Files = []DeletedJSON{}
	slices.SortFunc(cands, func(a, b DeletedJSON) int { return compareDeleted(&a, &b) })
	for i := range cands {
		d := &cands[i]
		if after != nil && compareDeleted(d, after) <= 0 {
			continue
		}
		// Recreated while history was off: not deleted.
		switch _, err := h.s.Read(ctx, c.ns+"/"+d.Path, 1); {
		case err == nil:
			continue
		case !errors.Is(err, store.ErrNotFound):
			return out, "", err
		}
		if len(out.Files) == limit {
			return out, deletedKey(&out.Files[limit-1]), nil
		}
		out.Files = append(out.Files, *d)
	}
	return out, "", nil
}

// deletedPos reads a position deletedKey made, refusing anything else.
func deletedPos(pos string) (*DeletedJSON, error) {
	ts, p, _ := strings.Cut(pos, " ")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || store.ValidatePath(p) != nil {
		return nil, problemOf(http.StatusBadRequest, "invalid-cursor", "cursor must be a next_cursor this listing returned")
	}
	return &DeletedJSON{Path: p, Time: &t}, nil
}

// pageOfDeleted is the page of deleted files c's ?cursor= asks for.
func (h *Handler) pageOfDeleted(c *call, limit int) (DeletedPageJSON, string, error) {
	pos, err := readCursor(c, "deleted")
	if err != nil {
		return DeletedPageJSON{}, "", err
	}
	var after *DeletedJSON
	if pos != "" {
		if after, err = deletedPos(pos); err != nil {
			return DeletedPageJSON{}, "", err
		}
	}
	return h.deletedFiles(c, after, limit)
}

// listDeleted lists the namespace's deleted files that history can bring
// back.
func (h *Handler) listDeleted(c *call) error {
	limit, err := c.limit()
	if err != nil {
		return err
	}
	out, next, err := h.pageOfDeleted(c, limit)
	if err != nil {
		return err
	}
	out.NextCursor = makeCursor("deleted", c.ns, next)
	return writeJSON(c.w, http.StatusOK, out)
}

// ConsolidatorClient is the client that [ActivityJSON] counts the changes
// of a consolidation under (their [UpdatedByKey] starts with
// pruned.ConsolidatorName + "/"), whatever client asked for it.
const ConsolidatorClient = "consolidator"

// clientOf is the client a change counts under in the activity: the
// consolidator for a consolidation's change, else the client it recorded
// ([ClientKey]: "api", "console", "cli", an MCP client's name), "" for
// none (programs using the store directly record none).
func clientOf(md map[string]string) string {
	if strings.HasPrefix(md[UpdatedByKey], pruned.ConsolidatorName+"/") {
		return ConsolidatorClient
	}
	return md[ClientKey]
}

// CountJSON counts the recorded changes of one client or one user.
type CountJSON struct {
	// Name is the client or the updated_by, "" for changes that record
	// none.
	Name string `json:"name"`
	// Changes counts every change.
	Changes int `json:"changes"`
	// Writes counts the writes.
	Writes int `json:"writes"`
	// Deletes counts the deletes.
	Deletes int `json:"deletes"`
	// Restores counts the restores (writes of a past version).
	Restores int `json:"restores"`
	// LastChange is the time of the newest of them (RFC 3339, UTC).
	LastChange *time.Time `json:"last_change,omitempty"`
	// LastPath is the file that change was made to, relative to the
	// namespace.
	LastPath string `json:"last_path"`
}

// ActivityJSON is who has been changing a namespace, and through what.
type ActivityJSON struct {
	// Namespace is the namespace described.
	Namespace string `json:"namespace"`
	// Changes counts the recorded changes: the history kept.
	Changes int `json:"changes"`
	// Clients counts them by client (see ConsolidatorClient), the most
	// changes first.
	Clients []CountJSON `json:"clients"`
	// Users counts them by updated_by, the most changes first.
	Users []CountJSON `json:"users"`
	// Recent are the newest changes, newest first (?limit=).
	Recent []EntryJSON `json:"recent"`
	// Recording is as in DeletedPageJSON.
	Recording bool `json:"recording"`
	// Truncated reports that only the first MaxHistoryScan changes were
	// read.
	Truncated bool `json:"truncated"`
}

// activityOf counts the history of c's namespace, keeping its recent
// newest changes.
func (h *Handler) activityOf(c *call, recent int) (ActivityJSON, error) {
	out := ActivityJSON{Namespace: c.ns, Clients: []CountJSON{}, Users: []CountJSON{}, Recent: []EntryJSON{}}
	clients, users := map[string]*CountJSON{}, map[string]*CountJSON{}
	var all []EntryJSON
	count := func(m map[string]*CountJSON, name string, e *EntryJSON) {
		n := m[name]
		if n == nil {
			n = &CountJSON{Name: name}
			m[name] = n
		}
		n.Changes++
		switch e.Kind {
		case "delete":
			n.Deletes++
		case "restore":
			n.Restores++
		default:
			n.Writes++
		}
		if e.Time != nil && (n.LastChange == nil || e.Time.After(*n.LastChange)) {
			n.LastChange, n.LastPath = e.Time, e.Path
		}
	}
	var err error
	out.Truncated, err = h.eachChange(c.r.Context(), c.ns, func(he *store.HistoryEntry) {
		e := c.entry(he)
		out.Changes++
		count(clients, clientOf(e.Metadata), &e)
		count(users, e.Metadata[UpdatedByKey], &e)
		all = append(all, e)
	})
	if err != nil {
		return out, historyErr(err)
	}
	out.Recording = h.s.HistoryRetention() > 0
	sorted := func(m map[string]*CountJSON) []CountJSON {
		out := []CountJSON{}
		for _, n := range m {
			out = append(out, *n)
		}
		slices.SortFunc(out, func(a, b CountJSON) int {
			return cmp.Or(cmp.Compare(b.Changes, a.Changes), cmp.Compare(a.Name, b.Name))
		})
		return out
	}
	out.Clients, out.Users = sorted(clients), sorted(users)
	slices.SortStableFunc(all, func(a, b EntryJSON) int {
		ta, tb := time.Time{}, time.Time{}
		if a.Time != nil {
			ta = *a.Time
		}
		if b.Time != nil {
			tb = *b.Time
		}
		return tb.Compare(ta)
	})
	out.Recent = append(out.Recent, all[:min(recent, len(all))]...)
	return out, nil
}

// activity answers the namespace's activity.
func (h *Handler) activity(c *call) error {
	limit, err := c.limit()
	if err != nil {
		return err
	}
	out, err := h.activityOf(c, limit)
	if err != nil {
		return err
	}
	return writeJSON(c.w, http.StatusOK, out)
}
