package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/store"
)

func (a *app) statsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stats [PREFIX]",
		Short: "Count files, bytes and namespaces",
		Long: `stats walks every file that starts with PREFIX (default: the whole store) and
prints the number of files, the bytes of their content and the number of
namespaces (distinct first path segments).`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			prefix := ""
			if len(argv) == 1 {
				prefix = argv[0]
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				var files, size int
				ns := map[string]bool{}
				for p, err := range s.Walk(ctx, prefix, 0) {
					if err != nil {
						return fileErr(prefix, err)
					}
					f, err := a.readFile(ctx, s, p)
					if errors.Is(err, store.ErrNotFound) {
						continue // deleted since listed
					}
					if err != nil {
						return err
					}
					files++
					size += len(f.Content)
					first, _, _ := strings.Cut(p, "/")
					ns[first] = true
				}
				fmt.Fprintf(a.stdout, "files: %d\nbytes: %d\nnamespaces: %d\n", files, size, len(ns))
				a.warnUnaddressable(prefix)
				return nil
			})
		},
	}
}
