// What the model pays: the injection budget of a notebook (memory.Budget)
// as the API and the notebook page show it.

package console

import (
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory"
)

// PartJSON is one part of the injection: characters (Unicode code
// points) and tokens, estimated as memory.EstimateTokens does.
type PartJSON struct {
	// Chars is the part's length in characters.
	Chars int `json:"chars"`
	// Tokens is Chars / chars_per_token, rounded up.
	Tokens int `json:"tokens"`
}

// BudgetJSON is how a notebook's snapshot spends the injection budget,
// part by part ([memory.Budget]): the guidance, MEMORY.md's excerpt, the
// file list and the rest of the block, out of max_tokens.
type BudgetJSON struct {
	// MaxTokens is the budget the guidance and the block share.
	MaxTokens int `json:"max_tokens"`
	// MaxLines bounds the MEMORY.md lines shown (0: none are).
	MaxLines int `json:"max_lines"`
	// CharsPerToken is the estimate's rule: a token per this many
	// characters, rounded up.
	CharsPerToken int `json:"chars_per_token"`
	// Guidance is the instructions.
	Guidance PartJSON `json:"guidance"`
	// Main is the block's MEMORY.md section: its heading, the lines shown
	// and the notes on what was left out.
	Main PartJSON `json:"main"`
	// Files is the block's list of the other memory files.
	Files PartJSON `json:"files"`
	// Other is the block's delimiters, heading and blank lines.
	Other PartJSON `json:"other"`
	// Total is the guidance and the whole block: at most MaxTokens.
	Total PartJSON `json:"total"`
	// MainLines counts MEMORY.md's lines.
	MainLines int `json:"main_lines"`
	// MainShown counts those the block shows (the last ones).
	MainShown int `json:"main_shown"`
	// CutByMaxLines counts the earlier lines max_lines leaves out.
	CutByMaxLines int `json:"cut_by_max_lines"`
	// CutByBudget counts the further earlier lines left out to fit
	// max_tokens.
	CutByBudget int `json:"cut_by_budget"`
	// MainTruncated says MEMORY.md is over the notebook's size limit: the
	// model never sees its end.
	MainTruncated bool `json:"main_truncated"`
	// MainFits is false when MEMORY.md no longer fits: the budget cut
	// lines, it is over the size limit, or the block was cut.
	MainFits bool `json:"main_fits"`
	// FilesListed counts the other files the block names.
	FilesListed int `json:"files_listed"`
	// FilesOmitted counts the files left out of the list to fit.
	FilesOmitted int `json:"files_omitted"`
	// FilesMore says more files exist than the listing reads (left out
	// uncounted).
	FilesMore bool `json:"files_more"`
	// Cut says the block was cut short even with every line and file
	// left out.
	Cut bool `json:"cut"`
	// Disabled says injection is off: only the guidance counts.
	Disabled bool `json:"disabled"`
}

func partJSON(p memory.Part) PartJSON { return PartJSON{Chars: p.Chars, Tokens: p.Tokens} }

func budgetJSON(b *memory.Budget) *BudgetJSON {
	return &BudgetJSON{MaxTokens: b.MaxTokens, MaxLines: b.MaxLines, CharsPerToken: memory.CharsPerToken,
		Guidance: partJSON(b.Guidance), Main: partJSON(b.Main), Files: partJSON(b.Files), Other: partJSON(b.Other), Total: partJSON(b.Total),
		MainLines: b.MainLines, MainShown: b.MainShown, CutByMaxLines: b.CutByMaxLines, CutByBudget: b.CutByBudget,
		MainTruncated: b.MainTruncated, MainFits: b.MainFits(), FilesListed: b.FilesListed, FilesOmitted: b.FilesOmitted,
		FilesMore: b.FilesMore, Cut: b.Cut, Disabled: b.Disabled}
}

// size is a file's length in characters and estimated tokens.
func size(content string) PartJSON {
	return PartJSON{Chars: utf8.RuneCountInString(content), Tokens: memory.EstimateTokens(content)}
}
