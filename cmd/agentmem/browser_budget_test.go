package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// budgetFlows are the flows console/browsertest/budget.mjs reports "ok"
// for, each of which must pass.
var budgetFlows = []string{"what the model pays", "folders and breadcrumbs", "keyboard", "strict CSP on every page",
	"a 390 px phone, every page", "without JavaScript, the main flow"}

// TestBrowserServeBudgetSQLite runs the budget and navigation flows
// against `agentmem serve --transport http` on a SQLite store.
// AGENTMEM_CONSOLE_SCREENSHOTS=../../docs writes their screenshots into
// docs/.
func TestBrowserServeBudgetSQLite(t *testing.T) {
	t.Parallel()
	budgetServe(t, "sqlite:"+filepath.Join(t.TempDir(), "memory.db")+"?history=on", os.Getenv("AGENTMEM_CONSOLE_SCREENSHOTS"))
}

// TestBrowserServeBudgetPostgres runs them on a PostgreSQL store
// (testenv's).
func TestBrowserServeBudgetPostgres(t *testing.T) {
	t.Parallel()
	budgetServe(t, browserPostgres(t, "budget"), "")
}

// budgetFigures are what the notebook page must show for one namespace,
// worked out here from the block memory.Snapshot injects and the
// instructions beside it (never from memory.Budget, which the page
// shows): characters and tokens (a token per memory.CharsPerToken
// characters, rounded up) of each part, the MEMORY.md lines shown and
// cut, the files listed, and each file's tokens.
type budgetFigures struct {
	Block         string            `json:"block"`
	Parts         map[string][2]int `json:"parts"` // guidance, main, files, other, total: chars, tokens
	MaxTokens     int               `json:"max_tokens"`
	MainLines     int               `json:"main_lines"`
	MainShown     int               `json:"main_shown"`
	CutByMaxLines int               `json:"cut_by_max_lines"`
	CutByBudget   int               `json:"cut_by_budget"`
	FilesListed   int               `json:"files_listed"`
	Fits          bool              `json:"fits"`
	Files         map[string]int    `json:"files"` // namespace-relative path: tokens
}

// figuresOf reads block as a model would.
func figuresOf(block, instructions, memoryMD string, files map[string]string) budgetFigures {
	runes := utf8.RuneCountInString
	part := func(chars int) [2]int {
		return [2]int{chars, (chars + memory.CharsPerToken - 1) / memory.CharsPerToken}
	}
	f := budgetFigures{Block: block, MaxTokens: memory.DefaultMaxTokens, Parts: map[string][2]int{}, Files: map[string]int{}}
	body := strings.TrimSuffix(strings.TrimPrefix(block, memory.BlockOpen), memory.BlockClose)
	const mainHead, filesHead = "### " + memory.MainFile + "\n\n", "### Other memory files\n\n"
	main, list, _ := strings.Cut(body, filesHead)
	if list != "" {
		list = filesHead + list
		main = strings.TrimSuffix(main, "\n\n")
	}
	if i := strings.Index(main, mainHead); i >= 0 {
		main = main[i:]
	}
	for l := range strings.SplitSeq(strings.TrimPrefix(main, mainHead), "\n") {
		if l != "" && !strings.HasPrefix(l, "... [") {
			f.MainShown++
		}
	}
	for l := range strings.SplitSeq(strings.TrimPrefix(list, filesHead), "\n") {
		if strings.HasPrefix(l, "- ") && !strings.HasPrefix(l, "- ... [") {
			f.FilesListed++
		}
	}
	f.Parts["guidance"], f.Parts["main"], f.Parts["files"] = part(runes(instructions)), part(runes(main)), part(runes(list))
	f.Parts["other"], f.Parts["total"] = part(runes(block)-runes(main)-runes(list)), part(runes(instructions)+runes(block))
	f.MainLines = strings.Count(strings.TrimRight(memoryMD, "\n"), "\n") + 1
	f.CutByMaxLines = max(0, f.MainLines-memory.DefaultMaxLines)
	f.CutByBudget = f.MainLines - f.CutByMaxLines - f.MainShown
	f.Fits = f.CutByBudget == 0
	for p, c := range files {
		f.Files[p] = (runes(c) + memory.CharsPerToken - 1) / memory.CharsPerToken
	}
	return f
}

// budgetNotebooks are the two namespaces the flows look at: dana's fits
// (230 short lines, 30 of them past MaxLines), in folders five deep;
// erin's no longer does (320 long lines).
func budgetNotebooks() map[string]map[string]string {
	lines := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, f+"\n", i)
		}
		return b.String()
	}
	return map[string]map[string]string{
		"dana": {
			"main/MEMORY.md":             lines(230, "- note %d: tea"),
			"main/people.md":             "# People\n\n- Ana: design review on Thursdays\n",
			"main/travel.md":             "# Travel\n\n- window seat, always\n- green tea on board\n",
			"main/projects/ideas.md":     "# Ideas\n\n- a budget view for the console\n",
			"main/projects/2026/plan.md": "# Plan 2026\n\n| quarter | goal |\n|---|---|\n| Q1 | launch |\n| Q2 | grow |\n",
			"main/projects/2026/q1/launch-checklist-for-the-first-public-release-of-the-console.md": "- [x] pages\n- [ ] screenshots\n",
			"main/archive/2025/notes.md": "- the old notes\n",
		},
		"erin": {
			"main/MEMORY.md":  lines(320, "- %03d: erin keeps every detail of every meeting here, far too long"),
			"main/topics.md":  "- moved out of MEMORY.md\n",
			"main/meeting.md": "- Monday stand-up\n",
		},
	}
}

// budgetServe seeds the two notebooks at storeURL, works out what their
// pages must show (figuresOf memory.Snapshot's block, memory's defaults
// as serve uses them), starts `agentmem serve --transport http` on the
// store with an admin key and dana's key, and runs
// console/browsertest/budget.mjs against it.
func budgetServe(t *testing.T, storeURL, shots string) {
	node, dir := browserPrereqs(t)
	ctx := t.Context()
	s, err := store.Open(ctx, storeURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	expected := map[string]budgetFigures{}
	for ns, files := range budgetNotebooks() {
		for p, c := range files {
			if _, err := s.Write(ctx, store.WriteRequest{Path: ns + "/" + p, Content: c, Metadata: map[string]string{"updated_by": ns, "client": "mcp"}}); err != nil {
				t.Fatal(err)
			}
		}
		block, err := mem.Snapshot(ctx, ns)
		if err != nil || block == "" {
			t.Fatalf("%s's snapshot: %q, %v", ns, block, err)
		}
		expected[ns] = figuresOf(block, mem.Instructions(), files["main/MEMORY.md"], files)
	}
	s.Close()
	want, err := json.Marshal(expected)
	if err != nil {
		t.Fatal(err)
	}
	if shots == "" {
		shots = t.TempDir()
	} else if shots, err = filepath.Abs(shots); err != nil {
		t.Fatal(err)
	}

	keys := keyFileOf(t, "admin-key root admin", "dana-key dana")
	base := runServe(t, "--store", storeURL, "serve", "--transport", "http", "--keys", keys, "--listen", "127.0.0.1:0", "--path", "/mcp")
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	runFlows(t, rctx, node, dir, "budget.mjs", append(os.Environ(), "CONSOLE_URL="+base+"/console/", "API_URL="+base, "EXPECTED="+string(want),
		"SHOTS_DIR="+shots, "CHROMIUM="+chromiumPath), budgetFlows)
	// The edit the flow made without JavaScript, as serve's API reports it.
	r := do(t, "GET", base+"/api/v1/namespaces/dana/files/main/projects/2026/plan.md", "dana-key", "")
	var f struct {
		Content  string            `json:"content"`
		Tokens   int               `json:"tokens"`
		Metadata map[string]string `json:"metadata"`
	}
	const edited = "# Plan 2026\n\n- edited without JavaScript\n"
	if err := json.Unmarshal([]byte(r.body), &f); err != nil || f.Content != edited || f.Tokens != (utf8.RuneCountInString(edited)+3)/4 ||
		f.Metadata["updated_by"] != "dana" || f.Metadata["client"] != "console" {
		t.Errorf("dana's plan.md after the flows: %d %s", r.code, r.body)
	}
}
