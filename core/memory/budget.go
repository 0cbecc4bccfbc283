// The injection budget, part by part: what Snapshot injects for one
// notebook, as a report the console shows.

package memory

import (
	"context"
	"fmt"

	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

// EstimateTokens is the token estimate of every budget of this package:
// one token per [CharsPerToken] characters (Unicode code points) of s,
// rounded up.
func EstimateTokens(s string) int { return tokensOf(notes.Runes(s)) }

func tokensOf(chars int) int { return (chars + CharsPerToken - 1) / CharsPerToken }

// Part is one part of the injection: its length in characters (runes)
// and its [EstimateTokens] estimate.
type Part struct {
	// Chars is the part's length in characters (Unicode code points).
	Chars int
	// Tokens is Chars / CharsPerToken, rounded up.
	Tokens int
}

func partOf(chars int) Part { return Part{Chars: chars, Tokens: tokensOf(chars)} }

// Budget is how one notebook spends the injection budget: what
// [Memory.Snapshot] injects for it, part by part, as the model gets it.
// The parts' characters add up: Guidance + Main + Files + Other = Total,
// and Main + Files + Other is the length of Block. Each part's Tokens is
// its own estimate, rounded up, so they may add up to a little more than
// Total.Tokens, which is at most MaxTokens.
type Budget struct {
	// MaxTokens is the budget ([Limits.MaxTokens]): the guidance and the
	// block together fit it.
	MaxTokens int
	// MaxLines is the bound on the MEMORY.md lines shown
	// ([Limits.MaxLines]; 0 for [NoLines]).
	MaxLines int
	// Block is exactly what Snapshot returns: "" when nothing is injected
	// (an empty notebook, injection disabled, the guidance alone filling
	// the budget).
	Block string
	// Disabled says injection is off ([Options.DisableInjection]): Block
	// is "" and only the guidance counts.
	Disabled bool
	// Guidance is the instructions ([Memory.Instructions]), which share
	// the budget.
	Guidance Part
	// Main is the block's MEMORY.md section: its heading, the lines shown
	// and the notes on what was left out.
	Main Part
	// Files is the block's list of the other memory files.
	Files Part
	// Other is the rest of the block: its delimiters, the heading and the
	// blank lines between sections (all of it when Cut).
	Other Part
	// Total is the guidance and the whole block.
	Total Part
	// MainLines counts MEMORY.md's lines (of its first
	// [Limits.MaxMemorySize] characters, trailing blank lines aside).
	MainLines int
	// MainShown counts the MEMORY.md lines the block shows: its last ones.
	MainShown int
	// CutByMaxLines counts the earlier lines MaxLines leaves out.
	CutByMaxLines int
	// CutByBudget counts the further earlier lines left out because they
	// do not fit MaxTokens.
	CutByBudget int
	// MainTruncated says MEMORY.md is larger than [Limits.MaxMemorySize]:
	// only its beginning was read, and the rest is never shown.
	MainTruncated bool
	// FilesListed counts the other files the block names.
	FilesListed int
	// FilesOmitted counts the files left out of the list to fit
	// MaxTokens.
	FilesOmitted int
	// FilesMore says the notebook has more files than the listing reads,
	// so some are left out uncounted.
	FilesMore bool
	// Cut says the block did not fit even with every line and file left
	// out that could be: it is cut short (or a marker that files were
	// omitted), and Main and Files are 0.
	Cut bool
}

// MainFits reports whether the block shows every MEMORY.md line that
// MaxLines lets through: false when the token budget cut lines, when
// MEMORY.md is larger than MaxMemorySize, or when the block was cut.
func (b *Budget) MainFits() bool { return b.CutByBudget == 0 && !b.MainTruncated && !b.Cut }

// Budget reports how the notebook of namespace spends the injection
// budget ([Budget]), reading it as [Memory.Snapshot] does; namespace is
// used as [Invocation.Namespace] is. Its Block is the block Snapshot
// returns for the same notebook. Unlike Snapshot it returns every error
// (a store failure, the namespace resolver's, store.ErrInvalidPath), in
// either error mode; a nil m is store.ErrNilArgument.
func (m *Memory) Budget(ctx context.Context, namespace string) (*Budget, error) {
	if m == nil {
		return nil, fmt.Errorf("memory: call Budget on a Memory from memory.New, not nil: %w", store.ErrNilArgument)
	}
	b := &Budget{MaxTokens: m.limits.MaxTokens, MaxLines: m.limits.MaxLines, Guidance: partOf(notes.Runes(m.instr)), Disabled: !m.inject}
	b.Total = b.Guidance
	if !m.inject {
		return b, nil
	}
	sc, err := m.resolve(ctx, namespace)
	if err != nil {
		return nil, err
	}
	budget := m.injectBudget()
	block, err := m.snapshot(ctx, &span{}, sc, max(0, budget), b)
	if err != nil {
		return nil, err
	}
	if budget <= 0 {
		block = "" // as Snapshot: the guidance alone fills the budget
	}
	b.Block = block
	b.Other = partOf(notes.Runes(block) - b.Main.Chars - b.Files.Chars)
	b.Total = partOf(b.Guidance.Chars + notes.Runes(block))
	return b, nil
}

// report fills b from the view v of MEMORY.md's lines lines, once fit
// made body of it.
func (b *Budget) report(v *view, lines int, body string) {
	b.MainLines, b.MainTruncated = lines, v.mainTrunc
	b.CutByMaxLines = max(0, lines-b.MaxLines)
	b.FilesOmitted, b.FilesMore = v.omitted, v.filesTrunc
	if body != v.String() {
		b.Cut, b.CutByBudget, b.FilesOmitted = true, lines-b.CutByMaxLines, v.omitted+len(v.files)
		return
	}
	b.MainShown, b.FilesListed = len(v.lines), len(v.files)
	b.CutByBudget = lines - b.CutByMaxLines - b.MainShown
	s := v.sections()
	b.Main, b.Files = partOf(s[sectionMain]), partOf(s[sectionFiles])
}
