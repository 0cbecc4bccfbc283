package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/core/memory"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

func (a *app) keygenCmd() *cobra.Command {
	var user string
	var admin bool
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make a random API key for `agentmem serve --transport http`",
		Long: `keygen prints a new random API key (256 bits, hex) on the first line, for the
client's "Authorization: Bearer <key>" header, and on the second the line to
append to the key file of serve --keys: "sha256:<hex of SHA-256 of the key> <user>",
with " admin" after it for --admin: a key that reaches every namespace in the
console and its JSON API (over MCP it is still one user's, its own notebook).
The key file holds only the hash; the key is shown this once.`,
		Example: `  agentmem serve keygen --user ana | tee /dev/stderr | tail -n 1 >> /etc/agentmem/keys
  agentmem serve keygen --user ops --admin`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return usagef("keygen: give the key's user with --user ID")
			}
			if strings.ContainsFunc(user, func(r rune) bool { return r <= ' ' || r == 0x7f }) || strings.HasPrefix(user, "#") {
				return usagef("keygen: --user %q: a user id in the key file has no spaces or control characters", user)
			}
			if memory.EscapeNamespace(user) == "" {
				return usagef("keygen: --user %q is not a valid user id", user)
			}
			var raw [32]byte
			if _, err := rand.Read(raw[:]); err != nil {
				return err
			}
			key := hex.EncodeToString(raw[:])
			fmt.Fprintln(a.stdout, key)
			line := agentmemmcp.HashKey(key) + " " + user
			if admin {
				line += " " + agentmemmcp.RoleAdmin
			}
			fmt.Fprintln(a.stdout, line)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user `ID` the key serves (required)")
	cmd.Flags().BoolVar(&admin, "admin", false, "make an admin key: every namespace in the console and the API")
	return cmd
}
