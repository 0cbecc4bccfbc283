package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// listed is a file and the version it had when listed.
type listed struct{ path, version string }

func (a *app) forgetCmd() *cobra.Command {
	var yes bool
	var user string
	c := &cobra.Command{
		Use:   "forget NAMESPACE | --user ID",
		Short: "Erase every file of one namespace (one user's memory) and its history",
		Long: `forget erases every file under NAMESPACE/ and nothing else: not "kamal-b/…"
for "kamal", not a file named NAMESPACE itself. Each delete compares-and-swaps on
the version listed, so a file written after the listing is kept and reported
(exit 3: run forget again). Then it erases the namespace's recorded history
(every past version and change of its files, the deletes just made included)
and says how many entries it removed. On a terminal it shows the count and asks
for confirmation; otherwise it needs --yes. NAMESPACE may end in "/" ("kamal/",
as ls takes it). --user ID names the namespace by a user id instead, escaped as
the ADK adapter does ("kamal@example.com" is namespace kamal_40example.com), as
log --user does.`,
		Example: "  agentmem forget kamal\n  agentmem forget --yes --user kamal@example.com",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var ns string
			switch {
			case strings.HasPrefix(user, "-"):
				return usagef("forget: --user takes the user id (--user %s reads as the id %q): write agentmem forget --yes --user ID", user, user)
			case user != "" && len(argv) == 1:
				return usagef("forget: give NAMESPACE or --user ID, not both (--user takes the user id: agentmem forget --user %s)", argv[0])
			case user != "":
				ns = memory.EscapeNamespace(user)
			case len(argv) == 1:
				ns = strings.TrimSuffix(argv[0], "/")
			default:
				return usagef("forget: give NAMESPACE or --user ID (usage: %s)", cmd.UseLine())
			}
			if err := store.ValidatePath(ns); err != nil {
				return usagef("forget: namespace %q is not a valid path (give a namespace such as kamal, or --user with a user id): %v", ns, err)
			}
			return a.withExisting(cmd, func(ctx context.Context, s *store.Store) error {
				files, err := a.listVersions(ctx, s, ns+"/")
				if err != nil {
					return err
				}
				history, err := a.hasHistory(ctx, s, ns+"/")
				if err != nil {
					return err
				}
				if len(files) == 0 && !history {
					fmt.Fprintf(a.stdout, "namespace %s has no files and no history; nothing erased\n", ns)
					return nil
				}
				what := fmt.Sprintf("%d files of namespace %s", len(files), ns)
				if history {
					what += " and its history"
				}
				if !yes {
					if !a.isTerminal(a.stdin) {
						return usagef("forget would erase %s: pass --yes to confirm (stdin is not a terminal)", what)
					}
					fmt.Fprintf(a.stderr, "Erase %s (%s/…)? This cannot be undone. Type yes: ", what, ns)
					line, _ := bufio.NewReader(a.stdin).ReadString('\n')
					if strings.TrimSpace(line) != "yes" {
						return usagef("forget: not confirmed; nothing erased")
					}
				}
				deleted, kept := 0, 0
				for _, f := range files {
					dctx, cancel := a.request(ctx)
					_, err := s.Delete(dctx, store.DeleteRequest{Path: f.path, Expected: f.version})
					cancel()
					switch {
					case errors.Is(err, store.ErrConflict):
						kept++
					case err != nil:
						return fmt.Errorf("agentmem: forget: erased %d of %d files, then %s: %w (rerun to finish)", deleted, len(files), f.path, deadline(err, a.timeout))
					default:
						deleted++
					}
				}
				// After the deletes, which are recorded too; a file kept is
				// forgotten by the rerun, which erases the history again.
				hctx, cancel := a.request(ctx)
				entries, err := s.ForgetHistory(hctx, ns+"/")
				cancel()
				if err != nil {
					return fmt.Errorf("agentmem: forget: erased %d files of %s, then its history: %w (rerun to finish)", deleted, ns, deadline(err, a.timeout))
				}
				// And the search index's rows, which no listing shows
				// (those of files deleted outside the store too).
				ictx, cancel := a.request(ctx)
				_, err = s.ForgetIndex(ictx, ns+"/")
				cancel()
				if err != nil {
					return fmt.Errorf("agentmem: forget: erased %d files of %s and its history, then its search index: %w (rerun to finish)", deleted, ns, deadline(err, a.timeout))
				}
				fmt.Fprintf(a.stdout, "erased %d files of namespace %s and %d history entries\n", deleted, ns, entries)
				if kept > 0 {
					return withCode(exitConflict, fmt.Errorf("agentmem: forget: %d files of %s changed after they were listed and were kept: run forget again", kept, ns))
				}
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "erase without asking")
	c.Flags().StringVar(&user, "user", "", "erase the namespace of user `ID` (escaped as the ADK adapter does)")
	return c
}

// listVersions lists every file under prefix with its current version.
func (a *app) listVersions(ctx context.Context, s *store.Store, prefix string) ([]listed, error) {
	var out []listed
	for p, err := range s.Walk(ctx, prefix, 0) {
		if err != nil {
			return nil, err
		}
		rctx, cancel := a.request(ctx)
		f, err := s.Read(rctx, p, 1)
		cancel()
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fileErr(p, deadline(err, a.timeout))
		}
		out = append(out, listed{p, f.Version})
	}
	return out, nil
}

// hasHistory reports whether any change under prefix is recorded; false on
// a backend that keeps no history.
func (a *app) hasHistory(ctx context.Context, s *store.Store, prefix string) (bool, error) {
	hctx, cancel := a.request(ctx)
	defer cancel()
	page, err := s.History(hctx, store.HistoryRequest{Prefix: prefix, Limit: 1})
	switch {
	case errors.Is(err, store.ErrHistoryUnsupported):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("agentmem: forget: reading the history of %s: %w", prefix, deadline(err, a.timeout))
	}
	return len(page.Entries) > 0, nil
}
