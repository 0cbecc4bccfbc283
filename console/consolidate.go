package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
)

// MaxConsolidateRuns bounds the consolidation runs of one request: a run
// reads at most ConsolidateOptions.MaxPrunedTokens of pruned text, and a
// request runs again while the run reports more, up to this many times.
// A dry run is always one run (it does not advance the checkpoint).
const MaxConsolidateRuns = 5

// MaxConsolidateDiffChars bounds the diff a consolidation answers (and
// stores for a retry with the same Idempotency-Key); a longer one is cut
// at a line and reported with diff_truncated.
const MaxConsolidateDiffChars = 32 << 10

// RequestedByKey is the metadata key the console adds to every change a
// consolidation it was asked for makes: the principal's user ("admin" for
// an admin without one). [UpdatedByKey] of those changes is the
// consolidator's (pruned.ConsolidatorName + "/" + the model's id), as
// core/memory records it; [ClientKey] is the principal's client.
const RequestedByKey = "requested_by"

// ConsolidateJSON is what a consolidation did (or, for a dry run, would
// do). Its counts add up the request's runs.
type ConsolidateJSON struct {
	// Namespace is the namespace consolidated.
	Namespace string `json:"namespace"`
	// DryRun reports that nothing was written.
	DryRun bool `json:"dry_run"`
	// Runs counts the consolidation runs the request made.
	Runs int `json:"runs"`
	// PrunedChars is how much pruned text the runs read; 0 (with no
	// edits) means nothing was pruned since the last consolidation.
	PrunedChars int `json:"pruned_chars"`
	// More reports pruned text left for another request.
	More bool `json:"more"`
	// Edits counts the edits of the runs' plans.
	Edits int `json:"edits"`
	// Applied counts the edits this request wrote.
	Applied int `json:"applied"`
	// Replayed counts the edits found already written: a run resumed after
	// an earlier request failed half way.
	Replayed int `json:"replayed"`
	// Skipped are edits that no longer applied (a concurrent change won).
	Skipped []SkippedJSON `json:"skipped"`
	// Files are the files the plans change, relative to the namespace.
	Files []string `json:"files"`
	// Expiries are the plans' edits that give a file an expiry (or, with
	// "never", remove it): the diff shows content only.
	Expiries []ExpiryJSON `json:"expiries,omitempty"`
	// Diff is the plans' line diff ("--- a/MEMORY.md" …), file names
	// relative to the notebook's folder; a resumed run's plan shows no
	// diff.
	Diff string `json:"diff"`
	// DiffTruncated reports a diff cut at [MaxConsolidateDiffChars].
	DiffTruncated bool `json:"diff_truncated,omitempty"`
	// Model is the model's id, as recorded with the changes.
	Model string `json:"model,omitempty"`
	// Asks counts the model requests.
	Asks int `json:"asks"`
	// Usage is the tokens those requests used.
	Usage UsageJSON `json:"usage"`
	// RunIDs are the runs' ids, recorded as run_id with their changes.
	RunIDs []string `json:"run_ids"`
	// RequestedBy is who asked (recorded as [RequestedByKey]).
	RequestedBy string `json:"requested_by"`
}

// ExpiryJSON is an edit of a consolidation that sets a file's expiry.
type ExpiryJSON struct {
	// File is relative to the namespace.
	File string `json:"file"`
	// Expires is the expiry as the model gave it (memory.ParseExpiry's
	// text: "7d", "2026-12-31", "never").
	Expires string `json:"expires"`
}

// SkippedJSON is an edit that did not apply, and why.
type SkippedJSON struct {
	// File is the file the edit was for.
	File string `json:"file"`
	// Reason says why it did not apply.
	Reason string `json:"reason"`
}

// UsageJSON counts tokens.
type UsageJSON struct {
	// InputTokens are the prompts' tokens.
	InputTokens int `json:"input_tokens"`
	// OutputTokens are the answers' tokens.
	OutputTokens int `json:"output_tokens"`
}

// modelError marks an error of Options.Consolidator, so that the API can
// tell the model failing (502) from the store failing.
type modelError struct{ err error }

func (e *modelError) Error() string { return e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// markModel wraps m so that its errors are *modelError.
func markModel(m pruned.Model) pruned.Model {
	return pruned.ModelFunc(func(ctx context.Context, req pruned.ModelRequest) (pruned.ModelResponse, error) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			return resp, &modelError{err}
		}
		return resp, nil
	})
}

var errNotConfigured = problemOf(http.StatusNotImplemented, "consolidation-not-configured",
	"this server has no consolidation model: its operator turns consolidation on by naming one (agentmem serve --model anthropic:MODEL, or $AGENTMEM_MODEL)")

// consolidateNamespace serves POST …/consolidate: one consolidation
// (?dry_run=1: the proposal, nothing written), exactly once per
// Idempotency-Key.
func (h *Handler) consolidateNamespace(c *call) error {
	if h.model == nil {
		return errNotConfigured
	}
	dry, err := queryBool(c.r, "dry_run")
	if err != nil {
		return err
	}
	op, err := c.operation(c.r.URL.Path, "consolidate")
	if err != nil {
		return err
	}
	var out ConsolidateJSON
	replayed := false
	if dry {
		out, err = h.consolidate(c, true)
	} else {
		out, replayed, err = h.consolidateOnce(c, op)
	}
	if err != nil {
		return err
	}
	if replayed {
		c.w.Header().Set("Idempotent-Replayed", "true")
	}
	return writeJSON(c.w, http.StatusOK, out)
}

// consolidateRecord is what the console stores for a consolidation asked
// with an Idempotency-Key (or a page's form token): claimed before the
// runs, the answer once they are done.
type consolidateRecord struct {
	Fingerprint string           `json:"fingerprint"`
	Done        bool             `json:"done"`
	Response    *ConsolidateJSON `json:"response,omitempty"`
}

// recordDir is the folder, in the notebook's consolidation state, of the
// records of consolidate requests.
const recordDir = "requests"

// DefaultConsolidateRecordRetention is how long the record of a
// consolidate request is kept by default: 30 days, past the store's
// receipts (7 days by default), so that a late retry is still answered.
const DefaultConsolidateRecordRetention = 30 * 24 * time.Hour

// RecordedAtKey is the metadata key of a consolidate request's record
// (under the notebook's pruned.StateDir, in requests/): when the request
// claimed it, RFC 3339 in UTC. The records' retention reads it, as
// core/memory's rotation reads pruned.AppendedAtKey: each new record
// deletes the namespace's records older than
// Options.ConsolidateRecordRetention, each delete recorded with
// UpdatedByKey pruned.RetentionUpdatedBy and pruned.RetentionReasonKey
// (the store's history can restore it). A record without the key, made
// before the console kept one, gets it when a pruning first finds it.
const RecordedAtKey = "recorded_at"

// consolidateOnce applies a consolidation, exactly once under op when not
// nil. The request is claimed first by writing a record under op (so a
// key used for another request is refused, 422, before the model is
// asked); a retry finds the record: done, it answers the stored response
// (replayed true) and writes nothing; not done (the first request failed
// or is still running), it runs again, which resumes the stored plan
// (core/memory's checkpoint: edits already written count as Replayed),
// and answers what that run did. Concurrent requests with one key to this
// handler run one at a time, so the later ones answer the first's stored
// response; across processes, the first to finish stores its answer and
// the others answer it (one that planned against the notebook as it was
// before the first's edits may fail as an invalid answer instead).
func (h *Handler) consolidateOnce(c *call, op *store.Operation) (ConsolidateJSON, bool, error) {
	if op == nil {
		out, err := h.consolidate(c, false)
		return out, false, err
	}
	ctx := c.r.Context()
	dir := c.ns + "/" + h.agent + "/" + pruned.StateDir + "/" + recordDir + "/"
	p := dir + digestHex(op.ID)[:40] + ".json"
	unlock, err := h.keyed.lock(ctx, p)
	if err != nil {
		return ConsolidateJSON{}, false, err
	}
	defer unlock()
	meta, err := c.stampMetadata(map[string]string{RecordedAtKey: h.now().UTC().Format(time.RFC3339)})
	if err != nil {
		return ConsolidateJSON{}, false, err
	}
	claim, _ := json.Marshal(consolidateRecord{Fingerprint: op.Fingerprint})
	mu, err := h.s.Write(ctx, store.WriteRequest{Path: p, Content: string(claim) + "\n", Expected: "", Operation: op, Metadata: meta})
	version := mu.Version
	if mu.Replayed || errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict) {
		// Claimed before: by a retried request, or (receipts expired) found
		// as a file.
		rec, v, err := h.readRecord(ctx, p, op)
		if err != nil || rec.Done {
			return deref(rec.Response), err == nil, err
		}
		version = v
	} else if err != nil {
		return ConsolidateJSON{}, false, err
	} else {
		h.pruneRecords(ctx, dir, p) // a new record: the old ones' retention
	}
	out, err := h.consolidate(c, false)
	if err != nil {
		return out, false, err
	}
	done, _ := json.Marshal(consolidateRecord{Fingerprint: op.Fingerprint, Done: true, Response: &out})
	_, err = h.s.Write(ctx, store.WriteRequest{Path: p, Content: string(done) + "\n", Expected: version, Metadata: meta})
	if errors.Is(err, store.ErrConflict) {
		// A concurrent request with the key finished first: answer its
		// response, as a retry would get.
		rec, _, rerr := h.readRecord(ctx, p, op)
		if rerr == nil && rec.Done {
			return deref(rec.Response), true, nil
		}
	}
	return out, false, err
}

// pruneRecords deletes the records under dir (one notebook's) that are
// older than the retention, but keep (the record just made), as
// core/memory's rotation deletes a series' old files: each delete is a
// compare-and-swap on the version read, with an operation id derived from
// the path and that version and the metadata of a retention delete (see
// [RecordedAtKey]); a record changed meanwhile waits for the next pruning,
// and a pinned one is never deleted. It costs the folder's listing and one read per record. A failure is
// logged: the request it runs in does not fail for it.
func (h *Handler) pruneRecords(ctx context.Context, dir, keep string) {
	now := h.now()
	err := func() error {
		for p, err := range h.s.Walk(ctx, dir, 0) {
			if err != nil {
				return err
			}
			if p == keep {
				continue
			}
			f, err := h.s.Read(ctx, p, wholeFile)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			at, perr := time.Parse(time.RFC3339, f.Metadata[RecordedAtKey])
			if perr != nil {
				// Made before records had a time: it gets one now, and goes
				// one retention later.
				meta := maps.Clone(f.Metadata)
				if meta == nil {
					meta = map[string]string{}
				}
				meta[RecordedAtKey] = now.UTC().Format(time.RFC3339)
				_, err = h.s.Write(ctx, store.WriteRequest{Path: p, Content: f.Content, Expected: f.Version, Metadata: meta,
					ExpiresAt: f.ExpiresAt, Pinned: f.Pinned}) // a write states the whole row: keep its lifetime
			} else if now.Sub(at) > h.recordRetention && !f.Pinned { // retention never deletes a pinned file
				key := digestHex("retention_delete\x00" + p + "\x00" + f.Version)
				_, err = h.s.Delete(ctx, store.DeleteRequest{Path: p, Expected: f.Version,
					Metadata: map[string]string{UpdatedByKey: pruned.RetentionUpdatedBy,
						pruned.RetentionReasonKey: "consolidate request record older than " + h.recordRetention.String()},
					Operation: &store.Operation{ID: "agentmem-retention:" + key[:40], Fingerprint: key}})
			}
			if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		attrs := []any{"error_kind", store.ErrorKind(err)}
		if h.logDetails {
			attrs = append(attrs, "error", err)
		}
		h.log.ErrorContext(ctx, "agentmem/console: deleting old consolidate request records failed; the next request tries again", attrs...)
	}
}

// readRecord reads the record at p, refusing one of another request.
func (h *Handler) readRecord(ctx context.Context, p string, op *store.Operation) (consolidateRecord, string, error) {
	var rec consolidateRecord
	f, err := h.s.Read(ctx, p, wholeFile)
	if err != nil {
		return rec, "", err
	}
	if err := json.Unmarshal([]byte(f.Content), &rec); err != nil || rec.Done && rec.Response == nil {
		return rec, "", fmt.Errorf("console: the consolidate request record %s is not the console's: %w", p, pruned.ErrConsolidationState)
	}
	if rec.Fingerprint != op.Fingerprint {
		return rec, "", store.ErrOperationConflict
	}
	return rec, f.Version, nil
}

func deref(r *ConsolidateJSON) ConsolidateJSON {
	if r == nil {
		return ConsolidateJSON{}
	}
	return *r
}

// consolidate runs consolidation in c's namespace: once for a dry run,
// else again while a run leaves more pruned text, up to
// [MaxConsolidateRuns]. Every change records the principal under
// [RequestedByKey] and [ClientKey] beside the consolidator's own keys.
// Its errors are problems (model-failed, model-answer-invalid,
// consolidation-state-invalid, consolidation-busy) or the store's; a
// problem after runs that wrote carries their counts.
func (h *Handler) consolidate(c *call, dry bool) (ConsolidateJSON, error) {
	o := h.consolidateOpts
	o.DryRun = dry
	o.Metadata = map[string]string{}
	for k, v := range h.consolidateOpts.Metadata {
		o.Metadata[k] = v
	}
	by := cmp.Or(c.p.User, "admin")
	o.Metadata[RequestedByKey] = by
	if c.p.Client != "" {
		o.Metadata[ClientKey] = c.p.Client
	}
	out := ConsolidateJSON{Namespace: c.ns, DryRun: dry, Skipped: []SkippedJSON{}, Files: []string{}, RunIDs: []string{}, RequestedBy: by}
	var diff strings.Builder
	for out.Runs < MaxConsolidateRuns {
		res, err := pruned.Consolidate(c.r.Context(), h.mem, c.ns, h.model, &o)
		if err != nil {
			return out, h.consolidateProblem(c, err, out)
		}
		out.Runs++
		out.PrunedChars += res.PrunedChars
		out.More = res.More
		out.Edits += len(res.Edits)
		for _, ed := range res.Edits {
			if ed.Expires != nil {
				out.Expiries = append(out.Expiries, ExpiryJSON{File: h.agent + "/" + ed.File, Expires: *ed.Expires})
			}
		}
		out.Applied += res.Applied
		out.Replayed += res.Replayed
		for _, s := range res.Skipped {
			out.Skipped = append(out.Skipped, SkippedJSON{File: h.agent + "/" + s.Edit.File, Reason: s.Reason})
		}
		for _, ch := range res.Changes {
			if f := h.agent + "/" + ch.File; !containsString(out.Files, f) {
				out.Files = append(out.Files, f)
			}
		}
		diff.WriteString(res.Diff)
		out.Model = cmp.Or(res.Model, out.Model)
		out.Asks += res.Asks
		out.Usage.InputTokens += res.Usage.InputTokens
		out.Usage.OutputTokens += res.Usage.OutputTokens
		if res.RunID != "" {
			out.RunIDs = append(out.RunIDs, res.RunID)
		}
		if dry || !res.More {
			break
		}
	}
	out.Diff, out.DiffTruncated = cutDiff(diff.String(), MaxConsolidateDiffChars)
	return out, nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// cutDiff cuts d to at most n runes, at a line break when one is in
// reach.
func cutDiff(d string, n int) (string, bool) {
	if utf8.RuneCountInString(d) <= n {
		return d, false
	}
	r := []rune(d)[:n]
	s := string(r)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i+1]
	}
	return s, true
}

// consolidateProblem maps an error of pruned.Consolidate to the API's
// problem, with the counts of the runs before it (out) when they wrote.
func (h *Handler) consolidateProblem(c *call, err error, out ConsolidateJSON) error {
	var p *Problem
	var me *modelError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err // 503
	case errors.As(err, &me):
		attrs := []any{"op", c.rt.op, "error_kind", store.ErrorKind(me.err)}
		if h.logDetails {
			attrs = append(attrs, "error", me.err)
		}
		h.log.ErrorContext(c.r.Context(), "agentmem/console: the consolidation model failed", attrs...)
		p = problemOf(http.StatusBadGateway, "model-failed", "the consolidation model failed to answer (the error is in the server's log); this run wrote nothing: send the request again")
	case errors.Is(err, pruned.ErrMalformedAnswer), errors.Is(err, pruned.ErrInvalidEdits):
		p = problemOf(http.StatusBadGateway, "model-answer-invalid", strings.TrimPrefix(err.Error(), "pruned: "))
	case errors.Is(err, pruned.ErrConsolidationState):
		p = problemOf(http.StatusConflict, "consolidation-state-invalid", "the notebook's consolidation state ("+h.agent+"/"+pruned.StateDir+"/) is not the library's; nothing was written: delete its file to start over")
	case errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict):
		p = problemOf(http.StatusConflict, "consolidation-busy", "the notebook's consolidation state kept changing (another run at the same time); what was written stays: send the request again")
	default:
		return err
	}
	if out.Applied+out.Replayed > 0 {
		p.Extra = map[string]any{"runs": out.Runs, "applied": out.Applied, "replayed": out.Replayed}
	}
	return p
}

// Pages.

type consolidatedData struct {
	Result  *ConsolidateJSON
	Preview bool
	// Replayed reports a form submitted before: the page shows what that
	// submit applied.
	Replayed bool
	// Token is the Apply form's token (on a preview).
	Token string
	Lines []diffLine
}

// Nothing reports a consolidation that found no pruned text.
func (d consolidatedData) Nothing() bool {
	r := d.Result
	return r.PrunedChars == 0 && r.Edits == 0 && r.Applied+r.Replayed == 0 && len(r.Skipped) == 0
}

// consolidateForm serves the notebook page's "Consolidate now" form:
// mode=preview is a dry run that shows the proposed diff (and an Apply
// form); mode=apply runs consolidation for real, exactly once per form
// render, and shows what it applied. Apply asks the model again: what it
// applies is what the page after it shows, which may differ from the
// preview.
func (h *Handler) consolidateForm(pc *pageCall) error {
	if h.model == nil {
		return errNotConfigured
	}
	d := consolidatedData{}
	var out ConsolidateJSON
	var err error
	switch pc.r.PostFormValue("mode") {
	case "preview":
		d.Preview, d.Token = true, formToken()
		out, err = h.consolidate(pc.call, true)
	case "apply":
		op, ferr := pc.formOp("consolidate")
		if ferr != nil {
			return ferr
		}
		out, d.Replayed, err = h.consolidateOnce(pc.call, op)
	default:
		return badForm("mode must be preview or apply")
	}
	if err != nil {
		return err
	}
	d.Result = &out
	if out.Diff != "" {
		d.Lines = diffLines(out.Diff)
	}
	title := "Consolidated " + pc.ns
	if d.Preview {
		title = "Consolidation preview of " + pc.ns
	}
	h.render(pc.w, pc.r, http.StatusOK, "consolidated", pc.data(title, d))
	return nil
}

// keyLocks are locks by key, taken under a context: a request waiting for
// another with its key stops waiting when its context ends. The zero value
// is ready to use.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// lock waits until no one holds key, takes it and returns its unlock.
func (k *keyLocks) lock(ctx context.Context, key string) (func(), error) {
	for {
		k.mu.Lock()
		ch, busy := k.held[key]
		if !busy {
			if k.held == nil {
				k.held = map[string]chan struct{}{}
			}
			ch = make(chan struct{})
			k.held[key] = ch
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, key)
				k.mu.Unlock()
				close(ch)
			}, nil
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
