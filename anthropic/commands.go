package anthropic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/core/store"
)

// dirSize is the size shown for a directory: stores keep no directories,
// so every one shows what a file system's directory entry usually takes.
const dirSize = "4.0K"

// snippetKey is the write metadata key of str_replace: the snippet's line
// range, "first:last", so that a replay rebuilds the original result.
const snippetKey = "agentmem.anthropic.snippet"

// kind is what a path names.
type kind int

const (
	absent kind = iota
	file
	dir
)

// stat reads what tg names: the file (read whole, up to MaxFileChars), a
// directory (some file lies below it), or nothing.
func (t *Tool) stat(ctx context.Context, l layout, tg target) (*store.File, kind, error) {
	if tg.isRoot() {
		return nil, dir, nil
	}
	f, err := t.s.Read(ctx, tg.store, t.o.MaxFileChars)
	switch {
	case err == nil:
		return f, file, nil
	case !errors.Is(err, store.ErrNotFound):
		// A file store reports a path below a file as an OS error
		// ("not a directory"): such a path does not exist.
		if p, err2 := t.fileOnWay(ctx, l, tg); err2 == nil && p != "" {
			return nil, absent, nil
		}
		return nil, absent, err
	}
	ps, err := t.s.ListPaths(ctx, tg.prefix(), 1)
	if err != nil {
		return nil, absent, err
	}
	if len(ps) > 0 {
		return nil, dir, nil
	}
	return nil, absent, nil
}

// storeError turns a store error the model can act on into a result, and
// passes every other error on.
func storeError(p string, err error) (Result, error) {
	switch {
	case errors.Is(err, store.ErrPathCollision):
		return refused(fmt.Sprintf("The path %s cannot be created: a file and a directory would share a name.", p)), nil
	case errors.Is(err, store.ErrTooLarge):
		return refused(fmt.Sprintf("The file %s is too large for the memory backend.", p)), nil
	case errors.Is(err, store.ErrPathEscape):
		return refused(fmt.Sprintf("Path %s would escape /memories directory", p)), nil
	}
	return Result{}, err
}

func (t *Tool) tooLarge(p string) Result {
	return refused(fmt.Sprintf("The file %s is longer than %d characters; it cannot be read or edited whole.",
		p, t.o.MaxFileChars))
}

func notExist(p string) Result {
	return refused(fmt.Sprintf("The path %s does not exist. Please provide a valid path.", p))
}

func (t *Tool) view(ctx context.Context, l layout, cmd Command) (Result, error) {
	tg, msg := l.resolve(cmd.Path)
	if msg != "" {
		return refused(msg), nil
	}
	f, k, err := t.stat(ctx, l, tg)
	if err != nil {
		return storeError(cmd.Path, err)
	}
	switch k {
	case absent:
		return notExist(cmd.Path), nil
	case dir:
		return t.viewDir(ctx, tg, cmd.Path)
	}
	if f.Truncated {
		return t.tooLarge(cmd.Path), nil
	}
	lines := strings.Split(f.Content, "\n")
	if len(lines) > maxLines {
		return refused(fmt.Sprintf("File %s exceeds maximum line limit of 999,999 lines.", cmd.Path)), nil
	}
	first := 1
	if len(cmd.ViewRange) == 2 {
		start := max(1, int(cmd.ViewRange[0])) - 1
		end := len(lines)
		if cmd.ViewRange[1] != -1 {
			end = int(cmd.ViewRange[1])
		}
		s, e := pySlice(len(lines), start, end)
		lines = lines[s:e]
		first = start + 1
	}
	return ok(fmt.Sprintf("Here's the content of %s with line numbers:\n", cmd.Path) + numbered(lines, first)), nil
}

// entry is one name in a directory listing.
type entry struct {
	file, dir bool
	children  map[string]*entry
}

func (t *Tool) viewDir(ctx context.Context, tg target, p string) (Result, error) {
	paths, err := t.s.ListPaths(ctx, tg.prefix(), t.o.MaxListFiles)
	if err != nil {
		return storeError(p, err)
	}
	root := &entry{children: map[string]*entry{}}
	for _, sp := range paths {
		segs := strings.Split(strings.TrimPrefix(sp, tg.prefix()), "/")
		e := root
		for i, seg := range segs[:min(len(segs), 2)] {
			c := e.children[seg]
			if c == nil {
				c = &entry{children: map[string]*entry{}}
				e.children[seg] = c
			}
			if i == len(segs)-1 {
				c.file = true
			} else {
				c.dir = true
			}
			e = c
		}
	}
	lines := []string{dirSize + "\t" + p}
	base := strings.TrimRight(p, "/") // "/memories/proj/" lists /memories/proj/plan.md
	var walk func(e *entry, rel, shown string, depth int) error
	walk = func(e *entry, rel, shown string, depth int) error {
		// Listed by memory name, as a file system lists its entries.
		names := map[string]string{}
		for seg := range e.children {
			names[memoryName(seg)] = seg
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if strings.HasPrefix(name, ".") || name == "node_modules" {
				continue
			}
			seg := names[name]
			c, r, sh := e.children[seg], seg, name
			if rel != "" {
				r, sh = rel+"/"+seg, shown+"/"+name
			}
			if c.dir {
				lines = append(lines, dirSize+"\t"+base+"/"+sh+"/")
				if depth < 2 {
					if err := walk(c, r, sh, depth+1); err != nil {
						return err
					}
				}
			}
			if c.file {
				// Read whole: the size is the whole file's, however long
				// (the driver reads the whole row whatever the bound).
				f, err := t.s.Read(ctx, tg.prefix()+r, math.MaxInt)
				if errors.Is(err, store.ErrNotFound) {
					continue // deleted since it was listed
				} else if err != nil {
					return err
				}
				lines = append(lines, formatSize(int64(len(f.Content)))+"\t"+base+"/"+sh)
			}
		}
		return nil
	}
	if err := walk(root, "", "", 1); err != nil {
		return storeError(p, err)
	}
	return ok(fmt.Sprintf("Here're the files and directories up to 2 levels deep in %s, "+
		"excluding hidden items and node_modules:\n", p) + strings.Join(lines, "\n")), nil
}

// replayed returns the recorded outcome of op, or nil.
func (t *Tool) replayed(ctx context.Context, op *store.Operation) (*store.Mutation, error) {
	return t.s.GetOperation(ctx, *op)
}

// fileOnWay returns the model path of a file that lies on tg's way (an
// ancestor that is a file), or "".
func (t *Tool) fileOnWay(ctx context.Context, l layout, tg target) (string, error) {
	sp := l.root()
	for _, seg := range tg.segs[:max(len(tg.segs)-1, 0)] {
		sp += "/" + seg
		if _, err := t.s.Read(ctx, sp, 1); err == nil {
			return l.display(sp), nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	return "", nil
}

func notDirectory(p string) Result {
	return refused(fmt.Sprintf("The path %s is a file, not a directory.", p))
}

func (t *Tool) create(ctx context.Context, l layout, op store.Operation, cmd Command) (Result, error) {
	tg, msg := l.resolve(cmd.Path)
	if msg != "" {
		return refused(msg), nil
	}
	success := ok(fmt.Sprintf("File created successfully at: %s", cmd.Path))
	exists := refused(fmt.Sprintf("File %s already exists", cmd.Path))
	if prev, err := t.replayed(ctx, &op); err != nil || prev != nil {
		return success, err
	}
	refuse := func(r Result) (Result, error) { return t.refuse(ctx, &op, r, success) }
	if p, err := t.fileOnWay(ctx, l, tg); err != nil {
		return storeError(cmd.Path, err)
	} else if p != "" {
		return refuse(notDirectory(p))
	}
	_, k, err := t.stat(ctx, l, tg)
	if err != nil {
		return storeError(cmd.Path, err)
	}
	if k != absent {
		return refuse(exists)
	}
	_, err = t.s.Write(ctx, store.WriteRequest{Path: tg.store, Content: cmd.FileText, Operation: &op})
	switch {
	case err == nil:
		return success, nil
	case errors.Is(err, store.ErrConflict):
		return refuse(exists)
	}
	return storeError(cmd.Path, err)
}

// refuse returns r, unless op landed after the receipt check (a concurrent
// replay), in which case it returns the original result.
func (t *Tool) refuse(ctx context.Context, op *store.Operation, r, landed Result) (Result, error) {
	if prev, err := t.replayed(ctx, op); err != nil {
		return Result{}, err
	} else if prev != nil {
		return landed, nil
	}
	return r, nil
}

// edit is the outcome of applying an edit to a file's content: the new
// content and the result, or a refusal.
type edit struct {
	content string
	result  Result
	meta    map[string]string
	refusal *Result
}

// editFile runs a read-modify-write loop on the file at cmd.Path: apply
// computes the new content from the current one. landed rebuilds the
// original result of a replay from the file as it is now.
func (t *Tool) editFile(ctx context.Context, l layout, op store.Operation, p string,
	apply func(content string) edit, landed func(ctx context.Context, tg target) (Result, error)) (Result, error) {
	tg, msg := l.resolve(p)
	if msg != "" {
		return refused(msg), nil
	}
	replay := func() (Result, error) { return landed(ctx, tg) }
	if prev, err := t.replayed(ctx, &op); err != nil {
		return Result{}, err
	} else if prev != nil {
		return replay()
	}
	refuse := func(r Result) (Result, error) {
		if prev, err := t.replayed(ctx, &op); err != nil {
			return Result{}, err
		} else if prev != nil {
			return replay()
		}
		return r, nil
	}
	for attempt := 1; ; attempt++ {
		f, k, err := t.stat(ctx, l, tg)
		if err != nil {
			return storeError(p, err)
		}
		switch {
		case k == absent:
			return refuse(notExist(p))
		case k == dir:
			return refuse(refused(fmt.Sprintf("The path %s is not a file.", p)))
		case f.Truncated:
			return refuse(t.tooLarge(p))
		}
		e := apply(f.Content)
		if e.refusal != nil {
			return refuse(*e.refusal)
		}
		// The file keeps its expiry and pin: the memory tool has no
		// argument for either, so no command changes them.
		mu, err := t.s.Write(ctx, store.WriteRequest{Path: tg.store, Content: e.content, Expected: f.Version,
			Operation: &op, Metadata: e.meta, ExpiresAt: f.ExpiresAt, Pinned: f.Pinned})
		switch {
		case err == nil && mu.Replayed:
			return replay()
		case err == nil:
			return e.result, nil
		case !errors.Is(err, store.ErrConflict):
			return storeError(p, err)
		case attempt == MaxAttempts:
			return refused(fmt.Sprintf("The file %s changed repeatedly while it was being edited; nothing was "+
				"changed. Try again.", p)), nil
		}
		if err := backoff(ctx, attempt); err != nil {
			return Result{}, err
		}
	}
}

const editedHeader = "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"

func (t *Tool) strReplace(ctx context.Context, l layout, op store.Operation, cmd Command) (Result, error) {
	apply := func(content string) edit {
		switch n := strings.Count(content, cmd.OldStr); {
		case n == 0:
			r := refused(fmt.Sprintf("No replacement was performed, old_str `%s` did not appear verbatim in %s.",
				cmd.OldStr, cmd.Path))
			return edit{refusal: &r}
		case n > 1:
			r := refused(fmt.Sprintf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. "+
				"Please ensure it is unique", cmd.OldStr, strings.Join(occurrenceLines(content, cmd.OldStr), ", ")))
			return edit{refusal: &r}
		}
		pos := strings.Index(content, cmd.OldStr)
		changed := strings.Count(content[:pos], "\n")
		next := strings.Replace(content, cmd.OldStr, cmd.NewStr, 1)
		newLines := strings.Split(next, "\n")
		first, last := max(0, changed-2), min(len(newLines), changed+3)
		return edit{
			content: next,
			result:  ok(editedHeader + numbered(newLines[first:last], first+1)),
			meta:    map[string]string{snippetKey: fmt.Sprintf("%d:%d", first, last)},
		}
	}
	landed := func(ctx context.Context, tg target) (Result, error) {
		// The snippet is rebuilt from the file while it still holds what
		// the original call wrote; after a later change only the header
		// can be given.
		f, err := t.s.Read(ctx, tg.store, t.o.MaxFileChars)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Result{}, err
		}
		if err == nil && f.OperationID == op.ID && !f.Truncated {
			if a, b, found := strings.Cut(f.Metadata[snippetKey], ":"); found {
				first, err1 := strconv.Atoi(a)
				last, err2 := strconv.Atoi(b)
				lines := strings.Split(f.Content, "\n")
				if err1 == nil && err2 == nil && 0 <= first && first <= last && last <= len(lines) {
					return ok(editedHeader + numbered(lines[first:last], first+1)), nil
				}
			}
		}
		return ok(strings.TrimSuffix(editedHeader, "\n")), nil
	}
	return t.editFile(ctx, l, op, cmd.Path, apply, landed)
}

func (t *Tool) insert(ctx context.Context, l layout, op store.Operation, cmd Command) (Result, error) {
	success := ok(fmt.Sprintf("The file %s has been edited.", cmd.Path))
	apply := func(content string) edit {
		lines := splitLines(content)
		if cmd.InsertLine < 0 || cmd.InsertLine > int64(len(lines)) {
			r := refused(fmt.Sprintf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]",
				cmd.InsertLine, len(lines)))
			return edit{refusal: &r}
		}
		lines = slices.Insert(lines, int(cmd.InsertLine), strings.TrimRight(cmd.InsertText, "\n"))
		next := strings.Join(lines, "\n")
		if !strings.HasSuffix(next, "\n") {
			next += "\n"
		}
		return edit{content: next, result: success}
	}
	landed := func(context.Context, target) (Result, error) { return success, nil }
	return t.editFile(ctx, l, op, cmd.Path, apply, landed)
}
