package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

func (a *app) snapshotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot USER",
		Short: "Print the memory block a model request carries for USER",
		Long: `snapshot prints exactly the <memory> block that the notebook injects beside
the latest prompt of USER (a user id, escaped to a namespace as the ADK adapter
does: "kamal@example.com" reads namespace kamal_40example.com), with the default
notebook options (agent "main"). It prints nothing for an empty notebook.`,
		Example: "  agentmem snapshot kamal@example.com",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns := memory.EscapeNamespace(argv[0])
			if ns == "" {
				return usagef("snapshot: USER must not be empty")
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				// Default options, except that a store failure is reported
				// rather than injected as an empty block.
				m, err := memory.New(s, &memory.Options{InjectionErrors: memory.RaiseErrors})
				if err != nil {
					return err
				}
				sctx, cancel := a.request(ctx)
				defer cancel()
				block, err := m.Snapshot(sctx, ns)
				if err != nil {
					return deadline(err, a.timeout)
				}
				if block != "" {
					fmt.Fprintln(a.stdout, strings.TrimSuffix(block, "\n"))
				}
				return nil
			})
		},
	}
}
