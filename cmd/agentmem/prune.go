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
		Short: "Delete expired memory files; remove expired receipts and tombstones",
		Long: `prune deletes every memory file whose expiry has passed (agentmem put --expires),
on every backend, each recorded in the history as a delete by agentmem-expiry
(kind expire in agentmem log; agentmem restore brings it back while the history
keeps it) when the backend keeps history, whether or not the store URL turns it
on. An expired file is hidden from every command, agent and search whether or
not prune has run: prune reclaims its space and completes its history. Pinned
files never expire.

Then it removes the expired receipts, delete tombstones and history entries on
backends without a native TTL (files, SQLite, PostgreSQL); backends with a TTL
(DynamoDB, Firestore, Cosmos DB) expire those themselves. It prints how many
files and rows it removed, together: the store reports one count. It lists the
whole store, so run it as a periodic job (cron).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			s, err := a.openPruning(ctx)
			if err != nil {
				return err
			}
			defer s.Close()
			n, err := s.PruneExpired(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "pruned %d expired files, receipts and tombstones\n", n)
			return nil
		},
	}
}

// openPruning opens the store as openExisting does, and, when its backend
// keeps history and the URL does not set store.HistoryParam, again with
// history on (as openRecording does), so that each expiry prune deletes is
// recorded and can be restored. A backend without history is opened
// without it: with history on, its deletes would fail.
func (a *app) openPruning(ctx context.Context) (*store.Store, error) {
	s, err := a.openExisting(ctx)
	if err != nil {
		return nil, err
	}
	u, uerr := store.ParseURL(a.storeURLOf())
	if !s.Capabilities().History || uerr != nil || u.Query().Has(store.HistoryParam) {
		return s, nil
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return a.openRecording(ctx)
}
