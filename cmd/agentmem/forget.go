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
				var answer error // confirm's refusal
				confirm := func(_ context.Context, f store.ForgetFound) error {
					answer = a.confirmForget(ns, f, yes)
					return answer
				}
				st, err := s.Forget(ctx, ns+"/", &store.ForgetOptions{Confirm: confirm, RequestTimeout: a.timeout})
				switch {
				case errors.Is(err, errNothingToForget):
					fmt.Fprintf(a.stdout, "namespace %s has no files and no history; nothing erased\n", ns)
					return nil
				case err != nil && err == answer:
					return err // not confirmed
				case err != nil && !(st.Kept > 0 && errors.Is(err, store.ErrConflict)):
					return fmt.Errorf("%w (rerun to finish)", deadline(err, a.timeout))
				}
				fmt.Fprintf(a.stdout, "erased %d files of namespace %s and %d history entries\n", st.Deleted, ns, st.HistoryEntries)
				if st.Kept > 0 {
					return withCode(exitConflict, fmt.Errorf("agentmem: forget: %d files of %s changed after they were listed and were kept: run forget again", st.Kept, ns))
				}
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "erase without asking")
	c.Flags().StringVar(&user, "user", "", "erase the namespace of user `ID` (escaped as the ADK adapter does)")
	return c
}

// errNothingToForget tells forget that the namespace is empty.
var errNothingToForget = errors.New("agentmem: nothing to forget")

// confirmForget asks whether to erase what forget found in ns (not when
// yes is set); it fails with errNothingToForget when there is nothing.
func (a *app) confirmForget(ns string, f store.ForgetFound, yes bool) error {
	if f.Files == 0 && !f.History {
		return errNothingToForget
	}
	what := fmt.Sprintf("%d files of namespace %s", f.Files, ns)
	if f.History {
		what += " and its history"
	}
	if yes {
		return nil
	}
	if !a.isTerminal(a.stdin) {
		return usagef("forget would erase %s: pass --yes to confirm (stdin is not a terminal)", what)
	}
	fmt.Fprintf(a.stderr, "Erase %s (%s/…)? This cannot be undone. Type yes: ", what, ns)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		return usagef("forget: not confirmed; nothing erased")
	}
	return nil
}
