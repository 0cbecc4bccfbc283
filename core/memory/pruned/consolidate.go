package pruned

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/agentmem/agentmem/core/internal/canon"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// ConsolidatorName is the [memory.UpdatedByKey] of every change [Consolidate]
// makes, followed by "/" and the model's id: "agentmem-consolidator/<model>".
const ConsolidatorName = "agentmem-consolidator"

// ModelKey is the metadata key that records the id of the model behind a
// consolidation's change.
const ModelKey = "model"

// Defaults of [ConsolidateOptions].
const (
	DefaultFile                = "pruned.md"
	DefaultConsolidationTokens = 4000
	DefaultConsolidationRounds = 2
)

// StateDir is the folder, inside a notebook's scope, that holds the
// consolidation state (checkpoint and pending edits) of each pruned file:
// <scope>/.consolidation/<pruned file>.json. Its name starts with a dot,
// which no memory file name does, so the model's tools cannot reach it,
// and it is nested, so neither the injected file list nor search_memory
// shows it. Erasing a namespace erases it too.
const StateDir = ".consolidation"

// Errors of [Consolidate].
var (
	// ErrNilModel reports a consolidation without a model.
	ErrNilModel = errors.New("pruned: Consolidate needs a model, got nil")
	// ErrMalformedAnswer reports that the model's answer was not the JSON
	// object of edits, twice in a row; nothing was written.
	ErrMalformedAnswer = errors.New("pruned: the consolidation model's answer was not the JSON object of edits (asked twice); nothing was written")
	// ErrInvalidEdits reports that the model's edits could not apply to the
	// notebook (a passage not found, a file over its limit, MEMORY.md over
	// its budget, a pruned file edited), twice in a row; nothing was
	// written.
	ErrInvalidEdits = errors.New("pruned: the consolidation model's edits do not apply to the notebook (asked twice); nothing was written")
	// ErrConsolidationState reports a consolidation state file that is not
	// the library's (edited by hand, or too large); nothing was written.
	ErrConsolidationState = errors.New("pruned: the consolidation state file is not valid; delete it to start over")
)

// ConsolidateOptions configures one [Consolidate] run. The zero
// value (or nil) means defaults.
type ConsolidateOptions struct {
	// PrunedFile is the first file of the pruned-history series, in the
	// scope (the history window's File). Default "pruned.md". Its series
	// (pruned.md, pruned_0002.md, …) is read in order.
	PrunedFile string
	// MaxPrunedTokens bounds the pruned text one run reads, at 4
	// characters per token (cut at a line break when one is in reach).
	// A run that leaves more reports More. Default 4,000.
	MaxPrunedTokens int
	// Prompt overrides the system text; "" means
	// [DefaultConsolidationPrompt]. Whatever it says, the data reaches the
	// model only inside its delimited blocks.
	Prompt string
	// DryRun asks the model and returns the proposed edits and diff
	// without writing anything (no edit, no checkpoint).
	DryRun bool
	// ModelID is recorded as the model's id when the model reports none.
	ModelID string
	// MaxRounds bounds how often a run re-reads the notebook and asks again
	// when edits no longer apply because someone changed the notebook
	// after the model answered. Default 2; past it the edits that still do
	// not apply are skipped (reported in Skipped), since the concurrent
	// change wins.
	MaxRounds int
	// MaxOutputTokens is passed to the model; 0 means its default.
	MaxOutputTokens int
	// Metadata is recorded with every change, over the consolidator's
	// own keys ([memory.UpdatedByKey], [ModelKey], run_id, tool_call_id).
	Metadata map[string]string
}

// Checkpoint is how far consolidation has read a pruned-history series:
// Offset characters (runes) into File, a scope-relative name.
type Checkpoint struct {
	// File is the series file read up to Offset ("pruned_0002.md").
	File string `json:"file"`
	// Offset counts the runes of File already consolidated.
	Offset int `json:"offset"`
}

// FileChange is one file's content before and after a run's edits.
type FileChange struct {
	// File is the scope-relative name.
	File string
	// Before is the content before the edits; "" with Created.
	Before string
	// After is the content after the edits.
	After string
	// Created reports that the file did not exist.
	Created bool
}

// SkippedEdit is an edit that did not apply, and why.
type SkippedEdit struct {
	// Edit is the edit the model proposed.
	Edit memory.Edit
	// Reason says why it did not apply.
	Reason string
}

// ConsolidateResult reports one run.
type ConsolidateResult struct {
	// DryRun echoes the option: nothing was written.
	DryRun bool
	// From and To are the checkpoints before and after the run; equal when
	// nothing was pruned since.
	From, To Checkpoint
	// PrunedChars is how much pruned text the run read.
	PrunedChars int
	// More reports that pruned text beyond To was left for another run.
	More bool
	// Edits are the edits of the run's plan (the last round's, after a
	// re-ask).
	Edits []memory.Edit
	// Changes are the files the plan changes, as computed when it was
	// made (a dry run's proposal).
	Changes []FileChange
	// Diff renders Changes as a line diff.
	Diff string
	// Applied and Replayed count the edits written by this call and those
	// found already written (a rerun after a crash).
	Applied, Replayed int
	// Skipped are edits that no longer applied after MaxRounds re-asks.
	Skipped []SkippedEdit
	// Asks is how many model requests the run made.
	Asks int
	// Usage is the tokens those requests used.
	Usage Usage
	// Model is the model id recorded with the changes.
	Model string
	// RunID is the run id of the edits (their operations derive from it).
	RunID string
}

type consolidation struct {
	m      *memory.Memory
	sc     string // the scope path
	ns     string
	model  Model
	o      ConsolidateOptions
	res    *ConsolidateResult
	state  string // state file path
	pruned string // PrunedFile, normalised
	// stateLife is the state file's lifetime as readState last read it:
	// writeState keeps it.
	stateLife stateLifetime
}

// Consolidate turns what was pruned from a conversation into notes: it
// reads the pruned-history series ([ConsolidateOptions.PrunedFile]) from
// the scope's checkpoint on, within a token budget, shows it with the
// current MEMORY.md to model, and applies the edits it answers — appends,
// replacements of one exact passage, new topic files — as write_memory
// calls ([memory.Memory.Call]: the same validation and compare-and-swap), then
// advances the checkpoint. namespace is used as [memory.Invocation.Namespace] is.
//
// The model's answer is parsed strictly (see [memory.Edit]); a malformed answer,
// or edits that do not apply to the notebook, is asked again once with
// the reasons, then fails ([ErrMalformedAnswer], [ErrInvalidEdits])
// without writing. MEMORY.md is kept within the injection budget: an edit
// that grows it past what [memory.Memory.Snapshot] can show is refused. The
// pruned text is untrusted: it reaches the model only inside its data
// block, its memory tags neutralised.
//
// # Exactly once
//
// The validated edits are stored with the checkpoint (in [StateDir])
// before the first is written, and each edit's operation derives from the
// scope, the checkpoint and the edit's position. A rerun after a crash at
// any point, or a concurrent run, therefore applies the stored edits,
// which the store answers as replays where they landed, and advances the
// checkpoint once (compare-and-swap on the state file). A concurrent edit
// by the user or the agent is never overwritten: an append re-reads the
// file, and a replacement whose passage changed is re-asked with the new
// notebook, up to MaxRounds times, then skipped.
//
// # Lifetimes
//
// The model is shown which files are pinned or expiring, and the current
// time; an edit may give its file an expiry ([memory.Edit].Expires: "until
// Friday" becomes a topic file that expires when Friday ends), validated
// like the rest of the plan. A pinned file is never deleted or emptied:
// consolidation deletes nothing, and an edit that replaces or removes a
// pinned file's text (old_text set), or gives it an expiry, is refused
// with the reason (re-asked, then Skipped). Every edit keeps its file's
// expiry and pin unless it names an expiry.
//
// Every change records [memory.UpdatedByKey] = "agentmem-consolidator/<model>"
// and [ModelKey], with the run and edit ids, in its metadata and, on a
// store with history, in its history entry, so `agentmem log` names the
// consolidator and `agentmem restore` undoes the change.
//
// Errors: store.ErrNilArgument (a nil m), [ErrNilModel],
// [ErrMalformedAnswer], [ErrInvalidEdits], [ErrConsolidationState],
// store.ErrInvalidPath (a bad namespace or PrunedFile), the model's and
// the backend's errors. After an error, run it again: it resumes where it
// stopped.
func Consolidate(ctx context.Context, m *memory.Memory, namespace string, model Model, opts *ConsolidateOptions) (*ConsolidateResult, error) {
	if m == nil {
		return nil, fmt.Errorf("pruned: pass Consolidate a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	if model == nil {
		return nil, ErrNilModel
	}
	var o ConsolidateOptions
	if opts != nil {
		o = *opts
	}
	o.PrunedFile = cmp.Or(o.PrunedFile, DefaultFile)
	pruned, ok := notes.FileName(o.PrunedFile)
	if !ok || pruned == memory.MainFile {
		return nil, fmt.Errorf("pruned: PrunedFile must be a memory file name other than %s: %w", memory.MainFile, store.ErrInvalidPath)
	}
	if o.MaxPrunedTokens <= 0 {
		o.MaxPrunedTokens = DefaultConsolidationTokens
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultConsolidationRounds
	}
	if o.Prompt == "" {
		o.Prompt = DefaultConsolidationPrompt
	}
	if err := store.ValidateMetadata(o.Metadata); err != nil {
		return nil, fmt.Errorf("pruned: ConsolidateOptions.Metadata: %w", err)
	}
	sc, err := m.Scope(ctx, memory.Invocation{Namespace: namespace})
	if err != nil {
		return nil, err
	}
	c := &consolidation{m: m, sc: sc, ns: namespace, model: model, o: o, pruned: pruned,
		state: sc + "/" + StateDir + "/" + pruned + ".json", res: &ConsolidateResult{DryRun: o.DryRun}}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return c.res, nil
}

// file is the path of name in the scope.
func (c *consolidation) file(name string) string { return c.sc + "/" + name }

func (c *consolidation) run(ctx context.Context) error {
	var mine *Checkpoint // the From of the plan this call worked on
	for attempt := 1; ; attempt++ {
		st, ver, err := c.readState(ctx)
		if err != nil {
			return err
		}
		if mine != nil && (st.Pending == nil || st.Pending.From != *mine) {
			return nil // another run finished the plan
		}
		if st.Pending == nil {
			ch, err := c.readPruned(ctx, st.Checkpoint, nil)
			if err != nil {
				return err
			}
			c.res.From, c.res.To, c.res.More, c.res.PrunedChars = st.Checkpoint, ch.next, ch.more, notes.Runes(ch.text)
			if ch.text == "" {
				return nil
			}
			edits, changes, err := c.ask(ctx, ch.text, nil)
			if err != nil {
				return err
			}
			c.res.Edits, c.res.Changes, c.res.Diff = edits, changes, diffChanges(changes)
			if c.o.DryRun {
				return nil
			}
			if st.Epoch == "" {
				st.Epoch = rand.Text()
			}
			st.Pending = &pendingPlan{From: st.Checkpoint, Next: ch.next, Model: c.res.Model, Edits: edits}
			ver, err = c.writeState(ctx, st, ver, "plan")
			if errors.Is(err, store.ErrConflict) && attempt < memory.MaxAttempts {
				if err := notes.Backoff(ctx, attempt); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
		} else {
			p := st.Pending
			c.res.From, c.res.To, c.res.Model, c.res.Edits = p.From, p.Next, p.Model, p.Edits
			if c.o.DryRun {
				main, _, err := c.readNotebook(ctx)
				if err != nil {
					return err
				}
				changes, _, err := c.simulate(ctx, main, p.Edits)
				if err != nil {
					return err
				}
				c.res.Changes, c.res.Diff = changes, diffChanges(changes)
				return nil
			}
		}
		mine = &st.Pending.From
		done, err := c.apply(ctx, st, ver)
		switch {
		case err == nil && done:
			return nil
		case err != nil && !errors.Is(err, store.ErrConflict):
			return err
		case attempt == memory.MaxAttempts:
			return fmt.Errorf("pruned: the consolidation state kept changing: %w", err)
		}
		if err := notes.Backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// apply writes the pending plan's edits, re-asks for those that no longer
// apply (storing the new round first), and advances the checkpoint. A
// conflict on the state file returns store.ErrConflict for run to re-read.
func (c *consolidation) apply(ctx context.Context, st consolidationState, ver string) (bool, error) {
	for {
		p := st.Pending
		runID := "consolidate-" + canon.Hash(map[string]any{"scope": c.sc, "epoch": st.Epoch,
			"file": p.From.File, "offset": p.From.Offset, "round": p.Round})[:32]
		c.res.RunID = runID
		var failed []SkippedEdit
		for i, e := range p.Edits {
			call := "edit-" + strconv.Itoa(i+1)
			inv := memory.Invocation{Namespace: c.ns, RunID: runID, ToolCallID: call, Metadata: c.metadata(p.Model, runID, call)}
			if why, err := c.pinnedNow(ctx, e); err != nil {
				return false, err
			} else if why != "" {
				failed = append(failed, SkippedEdit{Edit: e, Reason: why})
				continue
			}
			out, err := c.m.Apply(ctx, inv, e)
			if err != nil {
				return false, err
			}
			switch r := out.(type) {
			case *memory.WriteResult:
				if r.Replayed {
					c.res.Replayed++
				} else {
					c.res.Applied++
				}
			case *memory.ToolError:
				failed = append(failed, SkippedEdit{Edit: e, Reason: r.Message})
			}
		}
		if len(failed) > 0 && p.Round < c.o.MaxRounds {
			ch, err := c.readPruned(ctx, p.From, &p.Next)
			if err != nil {
				return false, err
			}
			feedback := make([]string, 0, len(failed)+1)
			feedback = append(feedback, "The notebook changed after your answer, so these edits no longer apply; "+
				"the other edits were applied and show in the notebook above. Give the edits still needed.")
			for _, f := range failed {
				feedback = append(feedback, fmt.Sprintf("- edit of %q: %s", f.Edit.File, f.Reason))
			}
			edits, changes, err := c.ask(ctx, ch.text, feedback)
			if err != nil {
				return false, err
			}
			c.res.Edits, c.res.Changes, c.res.Diff = edits, changes, diffChanges(changes)
			st.Pending = &pendingPlan{From: p.From, Next: p.Next, Round: p.Round + 1, Model: p.Model, Edits: edits}
			if ver, err = c.writeState(ctx, st, ver, "plan"); err != nil {
				return false, err
			}
			continue
		}
		c.res.Skipped = failed
		next := consolidationState{Epoch: st.Epoch, Checkpoint: p.Next}
		if _, err := c.writeState(ctx, next, ver, "advance"); err != nil {
			return false, err
		}
		return true, nil
	}
}

// metadata is the metadata of one change of the run.
func (c *consolidation) metadata(model, runID, call string) map[string]string {
	model = cmp.Or(model, "unknown")
	meta := map[string]string{memory.UpdatedByKey: ConsolidatorName + "/" + model, ModelKey: model, "tool_call_id": call}
	if runID != "" {
		meta["run_id"] = runID
	}
	maps.Copy(meta, c.o.Metadata)
	return meta
}
