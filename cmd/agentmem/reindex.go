package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/store"
)

func (a *app) reindexCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reindex [PREFIX]",
		Short: "Rebuild the search index of every file under PREFIX for the embedder",
		Long: `reindex brings the hybrid-search index of every file under PREFIX (every file
without one) up to date with the embedder (the store URL's embedder=, else
--embedder, else $` + EmbedderEnv + `, else ` + DefaultEmbedder + `), one file at a time: after a model change
it embeds every chunk again; after edits made behind the store's back (another
program, a hand edit in a file store) only the chunks that changed. It prints
the files it visited, those already current, and the chunks it embedded and
reused. Searches never need it to be right (a search embeds, within its
bounds, what the index lacks); it makes them fast again after a model change.

It is resumable: interrupted, it keeps what it wrote, and a rerun skips every
file whose index is current, embedding nothing for them.`,
		Example: `  agentmem --store 'sqlite:memory.db?embedder=openai:text-embedding-3-small' reindex
  agentmem reindex kamal/`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			if err := store.ValidatePrefix(prefix); err != nil {
				return fileErr(prefix, err)
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				e := s.Embedder()
				if e == nil {
					return usagef("reindex: no embedder (embedder=none or --embedder none): name one with --embedder or the store URL's embedder=")
				}
				st, err := s.Reindex(ctx, prefix)
				report := fmt.Sprintf("%d files under %q, %d current, %d reindexed for %s: %d chunks embedded, %d reused",
					st.Files, prefix, st.Current, st.Indexed, e.Model(), st.Embedded, st.Reused)
				if err != nil {
					if errors.Is(err, context.Canceled) || ctx.Err() != nil {
						return fmt.Errorf("reindex interrupted after %s; nothing is lost: rerun the same command to finish", report)
					}
					return fmt.Errorf("reindex stopped after %s (rerun to resume: current files are skipped): %w", report, err)
				}
				fmt.Fprintln(a.stdout, report)
				return nil
			})
		},
	}
}
