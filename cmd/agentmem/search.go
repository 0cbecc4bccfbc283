package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/search"
	"github.com/agentmem/agentmem/core/store"
)

func (a *app) searchCmd() *cobra.Command {
	var r search.Request
	var jsonOut bool
	var mode string
	c := &cobra.Command{
		Use:   "search PREFIX QUERY",
		Short: "Bounded search of every file under PREFIX, by words and meaning",
		Long: `search scores every file whose path starts with PREFIX, in every folder below
it ("kamal/" searches kamal/main/MEMORY.md too, as ls lists it), by QUERY, and
prints "score path" then the snippet, best first: the store's one search, each
folder ranked with its own index and statistics, the matches sharing one
--limit and one --max-chars. Every bound is a flag: --max-files and
--max-file-chars bound what a folder's scan reads (a folder's search index,
once built, covers all of its files). When a bound cut the search short, or
nothing matched, it says on stderr how many files it covered, and why it
scanned files instead of answering from the index, if it did. When nothing
matched, the files closest in meaning (hybrid ranking; no word in common with
QUERY) follow a "no match; close in meaning:" line: worth a look, not an
answer.

The ranking is hybrid (BM25 fused with the embedder's vectors; see agentmem
--help for the embedder) with an embedder, BM25 without; --mode picks one:
literal (the reference notebook's term counts), bm25, or hybrid (which needs
an embedder). --recency HALF-LIFE (such as 168h) weighs recently written files
more: it reorders matches whose scores are within about 10% of each other,
never adds or removes one.

--json prints exactly what the notebook's search_memory tool returns for the
scope PREFIX (NAMESPACE/AGENT/, such as kamal/main/): the same JSON, with its
bounds (10 matches, 4,000 characters, 1,000 files, 65,536 characters per file;
--limit, --max-chars, --max-files and --max-file-chars set them); a query the
tool refuses prints its {"error": …} and exits 2.`,
		Example: `  agentmem search kamal/ "tea hanoi"
  agentmem search --json kamal/main/ "what does she drink"
  agentmem search --mode literal kamal/ tea`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			r.Prefix, r.Query, r.Mode = argv[0], argv[1], search.Mode(mode)
			if cmd.Flags().Changed("mode") && (mode == "" || !r.Mode.Valid()) {
				return usagef("search: --mode %q: use literal, bm25 or hybrid", mode)
			}
			if r.RecencyHalfLife < 0 {
				return usagef("search: --recency must not be negative (0 turns it off), got %s", r.RecencyHalfLife)
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				if r.Mode == search.Hybrid && s.Embedder() == nil {
					return usagef("search: --mode hybrid needs an embedder, and this store has none (embedder=none or --embedder none)")
				}
				if jsonOut {
					return a.searchJSON(ctx, cmd, s, r)
				}
				return a.search(ctx, s, r)
			})
		},
	}
	c.Flags().IntVar(&r.Limit, "limit", 10, "most matches to print")
	c.Flags().IntVar(&r.MaxFiles, "max-files", 1000, "most files a folder's scan scores (a built index covers all)")
	c.Flags().IntVar(&r.MaxChars, "max-chars", 8000, "most characters of names and snippets, over all matches of all folders")
	c.Flags().IntVar(&r.MaxFileChars, "max-file-chars", 65536, "most characters read of each file")
	c.Flags().BoolVar(&jsonOut, "json", false, "print what the notebook's search_memory returns for the scope PREFIX (NAMESPACE/AGENT/)")
	c.Flags().StringVar(&mode, "mode", "", "ranking: literal, bm25 or hybrid (default hybrid with an embedder, else bm25)")
	c.Flags().DurationVar(&r.RecencyHalfLife, "recency", 0, "weigh recently written files more, with this half-life (168h; 0: off)")
	return c
}

// search prints the store's search of every folder under r.Prefix: the
// matches, or the files close in meaning when none, then on stderr what
// was left out and why the search scanned, if it did.
func (a *app) search(ctx context.Context, s *store.Store, r search.Request) error {
	r.Recursive = true
	sctx, cancel := a.request(ctx)
	defer cancel()
	res, err := s.Search(sctx, r)
	if err != nil {
		return fileErr(r.Prefix, deadline(err, a.timeout))
	}
	printMatches(a.stdout, res.Matches)
	if len(res.Matches) == 0 && len(res.Related) > 0 {
		fmt.Fprintln(a.stdout, "no match; close in meaning:")
		printMatches(a.stdout, res.Related)
	}
	switch {
	case res.Truncated:
		fmt.Fprintf(a.stderr, "(truncated: %d files scored under %q; raise --limit, --max-files, --max-chars or --max-file-chars)\n", res.Scanned, r.Prefix)
	case len(res.Matches) == 0:
		fmt.Fprintf(a.stderr, "no match: %d files scored under %q\n", res.Scanned, r.Prefix)
	}
	if res.Fallback != "" {
		fmt.Fprintf(a.stderr, "(%s)\n", res.Fallback)
	}
	return nil
}

// printMatches prints each match as "score path", then its snippet
// indented by a tab.
func printMatches(w io.Writer, ms []search.Match) {
	for _, m := range ms {
		fmt.Fprintf(w, "%g %s\n", m.Score, m.Path)
		fmt.Fprintf(w, "\t%s\n", strings.ReplaceAll(strings.TrimRight(m.Snippet, "\n"), "\n", "\n\t"))
	}
}

// searchJSON prints what the notebook's search_memory returns for the
// scope r.Prefix, NAMESPACE/AGENT/: the tool itself answers, with the
// notebook's default bounds unless a bound flag was given.
func (a *app) searchJSON(ctx context.Context, cmd *cobra.Command, s *store.Store, r search.Request) error {
	scope := strings.TrimSuffix(r.Prefix, "/")
	if scope == "" || strings.HasSuffix(scope, "/") {
		return usagef("search --json: PREFIX must name a notebook's scope, NAMESPACE/AGENT/ (such as kamal/main/), got %q", r.Prefix)
	}
	ns, agent := "", scope
	if i := strings.LastIndex(scope, "/"); i >= 0 {
		ns, agent = scope[:i], scope[i+1:]
	}
	var l memory.Limits
	for _, b := range []struct {
		flag string
		v    int
		to   *int
	}{
		{"limit", r.Limit, &l.MaxSearchResults},
		{"max-chars", r.MaxChars, &l.MaxSearchResultChars},
		{"max-files", r.MaxFiles, &l.MaxSearchFiles},
		{"max-file-chars", r.MaxFileChars, &l.MaxMemorySize},
	} {
		if cmd.Flags().Changed(b.flag) {
			if b.v <= 0 {
				return usagef("search: --%s must be positive, got %d", b.flag, b.v)
			}
			*b.to = b.v
		}
	}
	m, err := memory.New(s, &memory.Options{AgentName: agent, SearchMode: r.Mode, SearchRecencyHalfLife: r.RecencyHalfLife, Limits: l})
	if err != nil {
		return fileErr(r.Prefix, err)
	}
	tool := memory.SearchTool
	args, err := json.Marshal(map[string]string{"query": r.Query})
	if err != nil {
		return err
	}
	sctx, cancel := a.request(ctx)
	defer cancel()
	res, err := m.Call(sctx, memory.Invocation{Namespace: ns}, tool, args)
	if err != nil {
		return fileErr(r.Prefix, deadline(err, a.timeout))
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, string(out))
	if te, ok := res.(*memory.ToolError); ok {
		return withCode(exitUsage, fmt.Errorf("agentmem: search: %s", te.Message))
	}
	return nil
}
