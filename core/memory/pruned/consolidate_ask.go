package pruned

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmem/agentmem/core/driver"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// readNotebook reads MEMORY.md (nil when absent) and the scope's other
// memory files in one round trip, as the snapshot does; each file is
// labelled with its pin or expiry (memory.FileLabel).
func (c *consolidation) readNotebook(ctx context.Context) (*store.File, []string, error) {
	limit := 200
	prefix := c.sc + "/"
	r, err := c.m.Store().ReadAndList(ctx, store.ReadAndListRequest{Path: c.file(memory.MainFile),
		MaxChars: c.m.Limits().MaxMemorySize, Prefix: prefix, Limit: limit + 2})
	if err != nil {
		return nil, nil, err
	}
	files, _, ok := notes.OtherFiles(r.Paths, prefix, limit)
	if !ok {
		return nil, nil, fmt.Errorf("%w: outside the requested scope", memory.ErrScope)
	}
	files = slices.DeleteFunc(files, c.isPruned)
	entries := make(map[string]store.Entry, len(r.Entries))
	for _, e := range r.Entries {
		entries[e.Path] = e
	}
	for i, name := range files {
		files[i] = memory.FileLabel(name, entries[prefix+name])
	}
	return r.File, files, nil
}

// ask asks the model for edits until an answer parses and applies to the
// notebook as read now: at most twice. feedback, when set, says why the
// previous round's edits no longer applied.
func (c *consolidation) ask(ctx context.Context, pruned string, feedback []string) ([]memory.Edit, []FileChange, error) {
	var last error
	for try := 0; try < 2; try++ {
		main, files, err := c.readNotebook(ctx)
		if err != nil {
			return nil, nil, err
		}
		cur := ""
		if main != nil {
			cur = main.Content
		}
		req := consolidationRequest{now: c.m.Store().Now(), main: cur, mainPinned: main != nil && main.Pinned,
			mainBudget: c.m.MainBudget(), files: files, pruned: pruned, feedback: feedback}
		resp, err := c.model.Generate(ctx, ModelRequest{System: c.o.Prompt, User: req.userText(), MaxOutputTokens: c.o.MaxOutputTokens})
		if err != nil {
			return nil, nil, fmt.Errorf("pruned: consolidation model: %w", err)
		}
		c.res.Asks++
		c.res.Usage = c.res.Usage.add(resp.Usage)
		c.res.Model = modelID(cmp.Or(resp.Model, c.o.ModelID))
		edits, perr := parseEdits(resp.Text)
		if perr != nil {
			last = fmt.Errorf("%w: %v", ErrMalformedAnswer, perr)
			feedback = []string{perr.Error()}
			continue
		}
		changes, problems, err := c.simulate(ctx, main, edits)
		if err != nil {
			return nil, nil, err
		}
		if len(problems) == 0 {
			return edits, changes, nil
		}
		last = fmt.Errorf("%w: %s", ErrInvalidEdits, strings.Join(problems, "; "))
		feedback = problems
	}
	return nil, nil, last
}

// modelID makes a model id fit for metadata: no NUL, at most 200 runes.
func modelID(id string) string {
	id = strings.ReplaceAll(id, "\x00", "")
	id, _ = driver.CutRunes(id, 200)
	return cmp.Or(id, "unknown")
}

// simulate applies edits in order, as write_memory would ([memory.Memory.Preview]), to
// the notebook as read: main is MEMORY.md, other files are read as
// needed. It returns the files changed and the problems that refuse the
// plan, each naming the edit.
func (c *consolidation) simulate(ctx context.Context, main *store.File, edits []memory.Edit) ([]FileChange, []string, error) {
	type file struct {
		before, after *string
		pinned        bool
	}
	files := map[string]*file{}
	if main != nil {
		files[memory.MainFile] = &file{before: &main.Content, after: &main.Content, pinned: main.Pinned}
		if main.Truncated {
			files[memory.MainFile] = nil
		}
	} else {
		files[memory.MainFile] = &file{}
	}
	var order, problems []string
	for i, e := range edits {
		bad := func(msg string) { problems = append(problems, fmt.Sprintf("edit %d (%s): %s", i+1, e.File, msg)) }
		if c.isPruned(e.File) {
			bad("the pruned-history files are not edited by consolidation; write to MEMORY.md or a topic file.")
			continue
		}
		f, ok := files[e.File]
		if !ok {
			cur, err := notes.Read(ctx, c.m.Store(), c.file(e.File), c.m.Limits().MaxMemorySize)
			if err != nil {
				return nil, nil, err
			}
			f = &file{}
			if cur != nil && cur.Truncated {
				f = nil
			} else if cur != nil {
				f.before, f.after, f.pinned = &cur.Content, &cur.Content, cur.Pinned
			}
			files[e.File] = f
		}
		if f == nil {
			bad(fmt.Sprintf("the file is larger than %d characters and cannot be edited.", c.m.Limits().MaxMemorySize))
			continue
		}
		if why := c.checkLifetime(e, f.pinned); why != "" {
			bad(why)
			continue
		}
		next, te := c.m.Preview(f.after, e)
		if te != nil {
			bad(te.Message)
			continue
		}
		if !slices.Contains(order, e.File) {
			order = append(order, e.File)
		}
		f.after = &next
	}
	if f := files[memory.MainFile]; f != nil && f.after != nil {
		budget, after, before := c.m.MainBudget(), notes.Runes(*f.after), 0
		if f.before != nil {
			before = notes.Runes(*f.before)
		}
		if after > before && after > budget {
			problems = append(problems, fmt.Sprintf("%s would be %d characters, over its budget of %d: replace "+
				"stale entries, shorten them, or move details to a topic file.", memory.MainFile, after, budget))
		}
		if lines := len(notes.SplitLines(*f.after)); c.m.Limits().MaxLines > 0 && lines > c.m.Limits().MaxLines &&
			(f.before == nil || lines > len(notes.SplitLines(*f.before))) {
			problems = append(problems, fmt.Sprintf("%s would have %d lines, over its limit of %d.", memory.MainFile, lines, c.m.Limits().MaxLines))
		}
	}
	var changes []FileChange
	for _, name := range order {
		f := files[name]
		ch := FileChange{File: name, After: *f.after, Created: f.before == nil}
		if f.before != nil {
			ch.Before = *f.before
		}
		if ch.Before != ch.After || ch.Created {
			changes = append(changes, ch)
		}
	}
	return changes, problems, nil
}
