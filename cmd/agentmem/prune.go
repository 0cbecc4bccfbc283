package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/store"
)

func (a *app) pruneCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Remove expired operation receipts and tombstones",
		Long: `prune removes the expired receipts and delete tombstones on backends without a
native TTL (files, SQLite, PostgreSQL) and prints how many rows it removed;
backends with a TTL (DynamoDB, Firestore, Cosmos DB) expire them themselves (0).
It never touches a memory file.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				n, err := s.PruneExpired(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "pruned %d expired receipts and tombstones\n", n)
				return nil
			})
		},
	}
}
