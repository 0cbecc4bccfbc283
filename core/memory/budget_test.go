package memory

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"
	"github.com/agentmem/agentmem/core/memory/internal/notes"
	"github.com/agentmem/agentmem/core/store"
)

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "éééé": 1, "ééééé✓": 2, strings.Repeat("x", 4000): 1000} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

// blockParts reads a block as a model would: the runes of its MEMORY.md
// section and of its file list (the last section), the MEMORY.md lines
// and the files it shows (the notes on what was left out aside).
func blockParts(t *testing.T, block string) (mainChars, filesChars, lines, files int) {
	t.Helper()
	if block == "" {
		return 0, 0, 0, 0
	}
	body := wantBlock(t, block)
	const mainHead, filesHead = "### " + MainFile + "\n\n", "### Other memory files\n\n"
	list := ""
	if i := strings.Index(body, filesHead); i >= 0 {
		body, list = body[:max(0, i-2)], body[i:]
		filesChars = notes.Runes(list)
		for l := range strings.SplitSeq(strings.TrimPrefix(list, filesHead), "\n") {
			if !strings.HasPrefix(l, "- ... [") {
				files++
			}
		}
	}
	if i := strings.Index(body, mainHead); i >= 0 {
		mainChars = notes.Runes(body[i:])
		for l := range strings.SplitSeq(strings.TrimPrefix(body[i:], mainHead), "\n") {
			if l != "" && !strings.HasPrefix(l, "... [") {
				lines++
			}
		}
	}
	return mainChars, filesChars, lines, files
}

// checkBudget checks b against the block Snapshot injects for the same
// notebook and against what the block shows; main is MEMORY.md's text.
func checkBudget(t *testing.T, m *Memory, ns, main string) *Budget {
	t.Helper()
	b, err := m.Budget(t.Context(), ns)
	if err != nil {
		t.Fatalf("Budget: %v", err)
	}
	block := snapshot(t, m, ns)
	if b.Block != block {
		t.Fatalf("Budget's block differs from Snapshot's:\n%q\n%q", b.Block, block)
	}
	if b.Main.Chars+b.Files.Chars+b.Other.Chars != notes.Runes(block) || b.Total.Chars != b.Guidance.Chars+notes.Runes(block) ||
		b.Guidance.Chars != notes.Runes(m.Instructions()) {
		t.Fatalf("the parts do not add up to the block (%d chars) and the instructions (%d): %+v", notes.Runes(block), notes.Runes(m.Instructions()), b)
	}
	for _, p := range []Part{b.Guidance, b.Main, b.Files, b.Other, b.Total} {
		if p.Tokens != (p.Chars+3)/4 {
			t.Fatalf("part %+v: tokens are not chars/4 rounded up", p)
		}
	}
	if b.Total.Tokens > b.MaxTokens && block != "" {
		t.Fatalf("total %d tokens over the budget of %d", b.Total.Tokens, b.MaxTokens)
	}
	lines := len(notes.SplitLines(strings.TrimRight(main, " \n")))
	if b.MainLines != lines || b.CutByMaxLines != max(0, lines-b.MaxLines) || b.CutByMaxLines+b.CutByBudget+b.MainShown != lines {
		t.Fatalf("MEMORY.md has %d lines, MaxLines %d; budget %+v", lines, b.MaxLines, b)
	}
	if b.Cut {
		return b
	}
	mainChars, filesChars, shown, files := blockParts(t, block)
	if b.Main.Chars != mainChars || b.Files.Chars != filesChars || b.MainShown != shown || b.FilesListed != files {
		t.Fatalf("the block shows %d lines (%d chars) and %d files (%d chars); Budget says %+v\n%s", shown, mainChars, files, filesChars, b, block)
	}
	return b
}

func lines(n, width int) string {
	var b strings.Builder
	for i := range n {
		l := fmt.Sprintf("- fact %d ✓ ", i)
		b.WriteString(l + strings.Repeat("x", max(0, width-notes.Runes(l))) + "\n")
	}
	return b.String()
}

func TestBudget(t *testing.T) {
	cases := []struct {
		name    string
		opts    *Options
		main    string
		files   int
		fits    bool
		byLines bool // MaxLines cut lines
		omitted bool // files left out
	}{
		{name: "small", main: lines(3, 20), files: 2, fits: true},
		{name: "over MaxLines", main: lines(250, 12), files: 3, fits: true, byLines: true},
		{name: "over the budget", main: lines(300, 60), files: 3, byLines: true, omitted: true},
		{name: "no lines", opts: &Options{Limits: Limits{MaxLines: NoLines}}, main: lines(5, 10), files: 1, fits: true, byLines: true},
		{name: "many files", opts: &Options{Guidance: noGuidance(), Limits: Limits{MaxTokens: 60}}, main: lines(2, 10), files: 40, fits: true, omitted: true},
		{name: "heading", opts: &Options{Heading: "Team notes"}, main: lines(4, 30), files: 1, fits: true},
		{name: "over MaxMemorySize", opts: &Options{Limits: Limits{MaxMemorySize: 100}}, main: lines(20, 30)},
		{name: "only files", files: 2, fits: true},
		{name: "empty", fits: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, s := newMem(t, c.opts)
			if c.main != "" {
				memtest.Put(t, s, "ana/main/MEMORY.md", c.main)
			}
			for i := range c.files {
				memtest.Put(t, s, fmt.Sprintf("ana/main/topic-%02d.md", i), "x")
			}
			memtest.Put(t, s, "ana/main/deep/nested.md", "not listed")
			read := c.main
			if c.opts != nil && c.opts.Limits.MaxMemorySize > 0 {
				read = string([]rune(c.main)[:c.opts.Limits.MaxMemorySize])
			}
			b := checkBudget(t, m, "ana", read)
			if b.MainFits() != c.fits || (b.CutByMaxLines > 0) != c.byLines || (b.FilesOmitted > 0) != c.omitted {
				t.Fatalf("fits %v (want %v), cut by MaxLines %d (want some: %v), files omitted %d (want some: %v): %+v",
					b.MainFits(), c.fits, b.CutByMaxLines, c.byLines, b.FilesOmitted, c.omitted, b)
			}
			if !c.fits && c.opts == nil && b.CutByBudget == 0 {
				t.Fatalf("no line cut by the budget: %+v", b)
			}
			if c.main == "" && c.files == 0 && (b.Block != "" || b.Total != b.Guidance) {
				t.Fatalf("an empty notebook injects nothing: %+v", b)
			}
		})
	}
}

// TestBudgetRandom checks Budget against Snapshot's block on random
// notebooks and limits, down to budgets the guidance alone fills.
func TestBudgetRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	_, s := newMem(t, nil)
	for i := range 150 {
		ns := fmt.Sprintf("n%d", i)
		main := lines(r.IntN(120), 1+r.IntN(90))
		if main != "" {
			memtest.Put(t, s, ns+"/main/MEMORY.md", main)
		}
		for j := range r.IntN(30) {
			memtest.Put(t, s, fmt.Sprintf("%s/main/f%03d.md", ns, j), "x")
		}
		opts := &Options{Limits: Limits{MaxTokens: 1 + r.IntN(1500), MaxLines: r.IntN(150) - 1}}
		if r.IntN(2) == 0 {
			opts.Guidance = new(strings.Repeat("g", r.IntN(400)))
		}
		if r.IntN(3) == 0 {
			opts.Heading = "H"
		}
		checkBudget(t, mustNew(t, s, opts), ns, main)
	}
}

func TestBudgetDisabledAndNil(t *testing.T) {
	m, s := newMem(t, &Options{DisableInjection: true})
	memtest.Put(t, s, "ana/main/MEMORY.md", "- x\n")
	b, err := m.Budget(t.Context(), "ana")
	if err != nil || !b.Disabled || b.Block != "" || b.Total != b.Guidance || b.Guidance.Chars != notes.Runes(m.Instructions()) {
		t.Fatalf("disabled: %+v, %v", b, err)
	}
	if _, err := m.Budget(t.Context(), "../x"); err != nil {
		t.Fatalf("disabled injection resolves no namespace, as Snapshot: %v", err)
	}
	on, _ := newMem(t, nil)
	if _, err := on.Budget(t.Context(), "a/../b"); !errors.Is(err, store.ErrInvalidPath) {
		t.Fatalf("invalid namespace: %v, want ErrInvalidPath", err)
	}
	var nilMem *Memory
	if _, err := nilMem.Budget(t.Context(), "ana"); !errors.Is(err, store.ErrNilArgument) {
		t.Fatalf("nil Memory: %v, want ErrNilArgument", err)
	}
}
