package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/core/store"
)

// A journal records the plan of a command that takes several store
// mutations (rename, delete of a directory) before the first of them, so
// that a replay after a crash finishes exactly that plan: each step runs
// with an operation derived from the command's (op/copy/i, op/delete/i),
// so a step that landed is never applied again, and the journal is
// deleted (op/done) when every step has run.
type journal struct {
	// Moves are the files a rename copies, then deletes.
	Moves []move `json:"moves,omitempty"`
	// Deletes are the files a directory delete removes.
	Deletes []fileVersion `json:"deletes,omitempty"`
}

// move is one file of a rename.
type move struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Version string `json:"version"` // From's version when planned
}

// fileVersion is one file of a delete, at the version it had when planned.
type fileVersion struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// runJournal writes j (unless a replay finds it written), runs its steps
// and deletes it. It returns done when the command has completed.
func (t *Tool) runJournal(ctx context.Context, l layout, op store.Operation, j *journal) error {
	path := l.journal(op.ID)
	plan := step(op, "plan")
	var version string
	if j != nil {
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		mu, err := t.s.Write(ctx, store.WriteRequest{Path: path, Content: string(b), Operation: plan})
		if err != nil {
			return err
		}
		if mu.Replayed {
			j = nil // a concurrent replay wrote it: run what it holds
		} else {
			version = mu.Version
		}
	}
	if j == nil {
		f, err := t.s.Read(ctx, path, 1<<30)
		if errors.Is(err, store.ErrNotFound) {
			return nil // finished and deleted
		} else if err != nil {
			return err
		}
		j = &journal{}
		if err := json.Unmarshal([]byte(f.Content), j); err != nil {
			return fmt.Errorf("anthropic: journal %s: %w", path, err)
		}
		version = f.Version
	}
	if err := t.runSteps(ctx, op, j); err != nil {
		return err
	}
	_, err := t.s.Delete(ctx, store.DeleteRequest{Path: path, Expected: version, Operation: step(op, "done")})
	if errors.Is(err, store.ErrConflict) {
		return nil // a concurrent replay deleted it first
	}
	return err
}

// runSteps runs a journal's steps. A step whose file changed since the
// plan is skipped: a concurrent writer's content is never lost (a moved
// file changed before its copy stays where it is; one changed after its
// copy stays at both paths).
func (t *Tool) runSteps(ctx context.Context, op store.Operation, j *journal) error {
	copied := make([]bool, len(j.Moves))
	for i, m := range j.Moves {
		o := step(op, "copy/"+strconv.Itoa(i))
		if prev, err := t.replayed(ctx, o); err != nil {
			return err
		} else if prev != nil {
			copied[i] = true
			continue
		}
		f, err := t.s.Read(ctx, m.From, 1<<30)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if f.Version != m.Version {
			continue
		}
		// The copy keeps the file's metadata, expiry and pin: a renamed
		// file is the same file.
		_, err = t.s.Write(ctx, store.WriteRequest{Path: m.To, Content: f.Content, Operation: o, Metadata: f.Metadata,
			ExpiresAt: f.ExpiresAt, Pinned: f.Pinned})
		switch {
		case err == nil:
			copied[i] = true
		case !errors.Is(err, store.ErrConflict):
			return err
		}
	}
	for i, m := range j.Moves {
		if copied[i] {
			if err := t.deleteStep(ctx, step(op, "delete/"+strconv.Itoa(i)), m.From, m.Version); err != nil {
				return err
			}
		}
	}
	for i, d := range j.Deletes {
		if err := t.deleteStep(ctx, step(op, "delete/"+strconv.Itoa(i)), d.Path, d.Version); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tool) deleteStep(ctx context.Context, o *store.Operation, path, version string) error {
	_, err := t.s.Delete(ctx, store.DeleteRequest{Path: path, Expected: version, Operation: o})
	if errors.Is(err, store.ErrConflict) {
		return nil // changed since the plan: keep it
	}
	return err
}

// resume finishes op's journal when an earlier attempt wrote one. It
// reports whether there was one.
func (t *Tool) resume(ctx context.Context, l layout, op store.Operation) (bool, error) {
	prev, err := t.replayed(ctx, step(op, "plan"))
	if err != nil || prev == nil {
		return false, err
	}
	return true, t.runJournal(ctx, l, op, nil)
}

// files lists the files below the directory tg with their versions. It
// returns false when there are more than MaxListFiles.
func (t *Tool) files(ctx context.Context, tg target) ([]fileVersion, bool, error) {
	paths, err := t.s.ListPaths(ctx, tg.prefix(), t.o.MaxListFiles+1)
	if err != nil || len(paths) > t.o.MaxListFiles {
		return nil, false, err
	}
	var out []fileVersion
	for _, p := range paths {
		f, err := t.s.Read(ctx, p, 1)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, false, err
		}
		out = append(out, fileVersion{Path: p, Version: f.Version})
	}
	return out, true, nil
}

func (t *Tool) tooMany(p string) Result {
	return refused(fmt.Sprintf("The directory %s holds more than %d files; work on its subdirectories instead.",
		p, t.o.MaxListFiles))
}

func (t *Tool) delete(ctx context.Context, l layout, op store.Operation, cmd Command) (Result, error) {
	tg, msg := l.resolve(cmd.Path)
	if msg != "" {
		return refused(msg), nil
	}
	if tg.isRoot() {
		return refused("Cannot delete the /memories directory itself"), nil
	}
	success := ok(fmt.Sprintf("Successfully deleted %s", cmd.Path))
	if prev, err := t.replayed(ctx, &op); err != nil || prev != nil {
		return success, err
	}
	if found, err := t.resume(ctx, l, op); err != nil || found {
		return success, err
	}
	missing := refused(fmt.Sprintf("The path %s does not exist", cmd.Path))
	for attempt := 1; ; attempt++ {
		f, k, err := t.stat(ctx, l, tg)
		if err != nil {
			return storeError(cmd.Path, err)
		}
		switch k {
		case absent:
			return t.refuse(ctx, &op, missing, success)
		case dir:
			fs, fits, err := t.files(ctx, tg)
			if err != nil {
				return storeError(cmd.Path, err)
			}
			if !fits {
				return t.tooMany(cmd.Path), nil
			}
			if err := t.runJournal(ctx, l, op, &journal{Deletes: fs}); err != nil {
				return storeError(cmd.Path, err)
			}
			return success, nil
		}
		_, err = t.s.Delete(ctx, store.DeleteRequest{Path: tg.store, Expected: f.Version, Operation: &op})
		switch {
		case err == nil:
			return success, nil
		case !errors.Is(err, store.ErrConflict):
			return storeError(cmd.Path, err)
		case attempt == MaxAttempts:
			return refused(fmt.Sprintf("The path %s changed repeatedly while it was being deleted; nothing was "+
				"deleted. Try again.", cmd.Path)), nil
		}
		if err := backoff(ctx, attempt); err != nil {
			return Result{}, err
		}
	}
}

func (t *Tool) rename(ctx context.Context, l layout, op store.Operation, cmd Command) (Result, error) {
	from, msg := l.resolve(cmd.OldPath)
	if msg != "" {
		return refused(msg), nil
	}
	to, msg := l.resolve(cmd.NewPath)
	if msg != "" {
		return refused(msg), nil
	}
	success := ok(fmt.Sprintf("Successfully renamed %s to %s", cmd.OldPath, cmd.NewPath))
	if found, err := t.resume(ctx, l, op); err != nil || found {
		return success, err
	}
	refuse := func(r Result) (Result, error) {
		if found, err := t.resume(ctx, l, op); err != nil || found {
			return success, err
		}
		return r, nil
	}
	if from.isRoot() {
		return refused("Cannot rename the /memories directory itself"), nil
	}
	_, dk, err := t.stat(ctx, l, to)
	if err != nil {
		return storeError(cmd.NewPath, err)
	}
	if dk != absent {
		return refuse(refused(fmt.Sprintf("The destination %s already exists", cmd.NewPath)))
	}
	f, k, err := t.stat(ctx, l, from)
	if err != nil {
		return storeError(cmd.OldPath, err)
	}
	if k == absent {
		return refuse(refused(fmt.Sprintf("The path %s does not exist", cmd.OldPath)))
	}
	if strings.HasPrefix(to.store+"/", from.prefix()) {
		return refuse(refused(fmt.Sprintf("Cannot move %s into itself", cmd.OldPath)))
	}
	if p, err := t.fileOnWay(ctx, l, to); err != nil {
		return storeError(cmd.NewPath, err)
	} else if p != "" {
		return refuse(notDirectory(p))
	}
	j := &journal{}
	if k == file {
		if f.Truncated {
			return refuse(t.tooLarge(cmd.OldPath))
		}
		j.Moves = []move{{From: from.store, To: to.store, Version: f.Version}}
	} else {
		fs, fits, err := t.files(ctx, from)
		if err != nil {
			return storeError(cmd.OldPath, err)
		}
		if !fits {
			return t.tooMany(cmd.OldPath), nil
		}
		for _, fv := range fs {
			j.Moves = append(j.Moves, move{From: fv.Path, To: to.store + "/" + strings.TrimPrefix(fv.Path, from.prefix()), Version: fv.Version})
		}
	}
	if err := t.runJournal(ctx, l, op, j); err != nil {
		return storeError(cmd.NewPath, err)
	}
	return success, nil
}
