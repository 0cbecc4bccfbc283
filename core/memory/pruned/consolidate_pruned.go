package pruned

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
)

// isPruned reports whether name belongs to the pruned-history series.
func (c *consolidation) isPruned(name string) bool {
	_, ok := seriesNumber(c.pruned, name)
	return ok
}

// seriesNumber returns n when name is the n-th file of the series that
// starts at first: first itself is 1, "<stem>_NNNN<ext>" (at least four
// digits) is NNNN, as memory's rotating append names them.
func seriesNumber(first, name string) (int, bool) {
	if name == first {
		return 1, true
	}
	stem, ext := first, ""
	if dot := strings.LastIndexByte(first, '.'); dot > 0 {
		stem, ext = first[:dot], first[dot:]
	}
	digits, ok := strings.CutPrefix(name, stem+"_")
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, ext); !ok || len(digits) < 4 || len(digits) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 2 || fmt.Sprintf("%s_%04d%s", stem, n, ext) != name {
		return 0, false
	}
	return n, true
}

// prunedSeries lists the files of the pruned-history series, in order. It
// is the one place that knows how the series is named and found: the
// reader below only walks what it returns.
func (c *consolidation) prunedSeries(ctx context.Context) ([]string, error) {
	stem := c.pruned
	if dot := strings.LastIndexByte(stem, '.'); dot > 0 {
		stem = stem[:dot]
	}
	prefix := c.sc + "/"
	type entry struct {
		name string
		n    int
	}
	var found []entry
	for p, err := range c.m.Store().Walk(ctx, prefix+stem, 0) {
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(p, prefix)
		if n, ok := seriesNumber(c.pruned, name); ok {
			found = append(found, entry{name, n})
		}
	}
	slices.SortFunc(found, func(a, b entry) int { return a.n - b.n })
	out := make([]string, len(found))
	for i, e := range found {
		out[i] = e.name
	}
	return out, nil
}

// prunedChunk is pruned text read from a checkpoint on.
type prunedChunk struct {
	text string
	next Checkpoint
	more bool
}

// readPruned reads the pruned text after from: up to the token budget
// (cut at the last line break in reach) when to is nil, else exactly up
// to to. A file of the series that is gone (deleted by retention) is
// skipped; a file now shorter than the checkpoint is taken as read.
func (c *consolidation) readPruned(ctx context.Context, from Checkpoint, to *Checkpoint) (prunedChunk, error) {
	out := prunedChunk{next: from}
	names, err := c.prunedSeries(ctx)
	if err != nil {
		return out, err
	}
	fromN := 1
	if from.File != "" {
		var ok bool
		if fromN, ok = seriesNumber(c.pruned, from.File); !ok {
			return out, fmt.Errorf("%w: checkpoint names another file", ErrConsolidationState)
		}
	}
	toN := -1
	if to != nil {
		toN, _ = seriesNumber(c.pruned, to.File)
	}
	remaining := c.o.MaxPrunedTokens * memory.CharsPerToken
	var b strings.Builder
	for _, name := range names {
		n, _ := seriesNumber(c.pruned, name)
		if n < fromN || (to != nil && n > toN) {
			continue
		}
		off := 0
		if n == fromN && name == from.File {
			off = from.Offset
		}
		want := off + remaining + 1
		if to != nil {
			want = c.m.Limits().MaxMemorySize * 4
			if n == toN {
				want = to.Offset
			}
		}
		if want <= off {
			continue
		}
		f, err := notes.Read(ctx, c.m.Store(), c.file(name), want)
		if err != nil {
			return out, err
		}
		if f == nil {
			continue
		}
		rs := []rune(f.Content)
		off = min(off, len(rs))
		chunk := rs[off:]
		if to == nil && len(chunk) > remaining {
			cut := chunk[:remaining]
			if i := lastIndexRune(cut, '\n'); i >= 0 {
				cut = cut[:i+1]
			}
			b.WriteString(string(cut))
			out.next, out.more = Checkpoint{File: name, Offset: off + len(cut)}, true
			break
		}
		b.WriteString(string(chunk))
		out.next = Checkpoint{File: name, Offset: off + len(chunk)}
		remaining -= len(chunk)
	}
	out.text = b.String()
	if notes.IsBlank(out.text) {
		out.text = ""
	}
	return out, nil
}

func lastIndexRune(rs []rune, r rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == r {
			return i
		}
	}
	return -1
}
