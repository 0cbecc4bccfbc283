package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// DefaultListen is the address `agentmem serve --transport http` listens
// on without --listen: loopback only.
const DefaultListen = "127.0.0.1:8787"

// serveFlags are the flags of `agentmem serve`.
type serveFlags struct {
	transport       string
	user            string
	listen          string
	path            string
	keys            string
	oauth           agentmemmcp.OAuthOptions
	oauthScopes     []string
	oauthAdminScope string
	maxBody         int64
	maxImport       int64
	sessionTimeout  time.Duration
	shutdownTimeout time.Duration
	pollInterval    time.Duration
	model           string
	publicURL       string
}

func (a *app) serveCmd() *cobra.Command {
	var f serveFlags
	var showVersion bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the notebook over MCP (stdio for one user, HTTP with API keys or OAuth)",
		Long: `serve serves the store's notebook to MCP clients (Claude Desktop, Claude Code,
agent frameworks): the tools write_memory, read_memory, delete_memory and
search_memory, the caller's files and the injected block as resources (with
subscriptions), and the prompt "memory". A subscriber hears of changes made
through this server at once, and of changes made by other processes (another
serve on the same store, agentmem append or put) within --poll-interval.

--transport stdio (the default) speaks MCP on stdin/stdout to the one client
that started the process, as the one user --user (required). Logs go to stderr.
On SIGINT or SIGTERM it refuses new requests, lets the call in flight finish and
answer (at most --shutdown-timeout), and exits 0.

--transport http serves MCP's streamable HTTP transport on --listen (default
` + DefaultListen + `), at the URL path --path only (default "/", and with OAuth
the audience's path too). On the same listener, with the same keys and
tokens, the JSON API is served under /api/v1/ (its OpenAPI document at
/api/v1/openapi.json) and the web console under /console/: a user's key
reaches its own namespace there, an admin key (a key file line ending in
"admin", or an OAuth token with --oauth-admin-scope) every namespace; over
MCP an admin key is one user like any other. Any other path is 404.
Beside them, without authentication,
GET /healthz answers 200 while the process serves (it asks the store nothing)
and GET /readyz 200 when the store answers one bounded read within 5s, else
503: point liveness and readiness probes at them. Every MCP request needs
"Authorization: Bearer <key>" (a 401 carries WWW-Authenticate: Bearer
realm="agentmem"); the key
file --keys (or OAuth, below: serve never runs without authentication) maps hashed
keys to users, one line "sha256:<hex> <user>" each, "sha256:<hex> <user> admin"
for an admin key; "agentmem serve keygen" makes a key and its line. A user only ever sees its own files, and each write
records who made it (metadata updated_by = the user, client = the MCP client's
name; over stdio updated_by is --user), which agentmem log shows. The file is
re-read when it changes, so keys are added and revoked without a restart; a
console session checks its key again on every page, so a revoked key's
sessions end and a demoted admin's narrow at once. Bodies over --max-body
bytes get 413 (MCP's, the API's file writes and restores), as do archives over
--max-import bytes (the API's import, the console's import upload); the API's
413 is problem+json. A proxy in front must let bodies that large through
(docs/deploy.md).

OAuth 2.1 (resource-server mode): with --oauth-issuer and --oauth-audience
(this server's canonical URL, as clients reach it: https://memory.example.com/mcp)
a bearer JWT of that issuer is accepted when its signature checks against the
issuer's JWKS (--oauth-jwks-url, or discovered from the issuer's metadata;
refetched when a token names an unknown key), its iss and aud match, and it is
not expired; its --oauth-user-claim (default sub) is the user. A 401 points
clients to the protected resource metadata (RFC 9728), served at
/.well-known/oauth-protected-resource[/path]. --keys and OAuth may be given
together: a token is looked up as an API key first, then verified as a JWT,
and both name users in one space (key user "ana" = token subject "ana"). On SIGINT or SIGTERM the server stops
accepting connections, lets the calls in flight finish (at most
--shutdown-timeout), then closes the sessions and exits 0. Put it behind TLS
to expose it beyond this machine (docs/deploy.md: a container image, a
systemd unit, a reverse proxy), and give --public-url, the https:// URL
browsers reach it at: the console's session cookie is then marked Secure
(without it, only a request that came over TLS to serve itself gets a Secure
cookie, which on plain loopback HTTP none does).

Every flag of serve can also come from the environment: --listen from
AGENTMEM_LISTEN, --oauth-issuer from AGENTMEM_OAUTH_ISSUER, and so on
(AGENTMEM_ and the flag's name in capitals, "-" as "_"; a list is
comma-separated; an empty one counts as unset), and --timeout from
AGENTMEM_TIMEOUT; the store comes from AGENTMEM_STORE. A flag on the command
line wins over its variable.`,
		Example: `  agentmem serve --store sqlite:$HOME/memory.db --user me
  agentmem serve keygen --user ana   # the key, then its line for the key file
  agentmem serve keygen --user ops --admin   # a key that reaches every namespace in the console
  AGENTMEM_TRANSPORT=http AGENTMEM_KEYS=/etc/agentmem/keys AGENTMEM_LISTEN=:8787 agentmem serve
  agentmem serve --transport http --keys /etc/agentmem/keys --store 'postgres://app@db/agents'
  agentmem serve --transport http --store sqlite:/srv/memory.db \
      --oauth-issuer https://auth.example.com/ --oauth-audience https://memory.example.com/mcp`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintf(a.stdout, "agentmem %s\n", version())
				return nil
			}
			if err := flagsFromEnv(cmd); err != nil {
				return err
			}
			return a.serve(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.transport, "transport", "stdio", "`stdio` (one user, --user) or http (--keys, --oauth-issuer)")
	fl.StringVar(&f.user, "user", "", "stdio: the user `ID` whose notebook is served (required)")
	fl.StringVar(&f.listen, "listen", DefaultListen, "http: the `host:port` to listen on")
	fl.StringVar(&f.path, "path", "", "http: the URL `path` MCP is served at (default /, and with OAuth the audience's path too)")
	fl.StringVar(&f.keys, "keys", "", "http: the API key `FILE` (lines \"sha256:<hex> <user>\")")
	fl.StringVar(&f.oauth.Issuer, "oauth-issuer", "", "http: accept JWT access tokens of this OAuth issuer `URL` (with --oauth-audience)")
	fl.StringVar(&f.oauth.Audience, "oauth-audience", "", "http: this server's canonical `URL`, the tokens' required aud (such as https://memory.example.com/mcp)")
	fl.StringVar(&f.oauth.JWKSURL, "oauth-jwks-url", "", "http: the issuer's JWKS `URL` (default: discovered from the issuer's metadata)")
	fl.StringVar(&f.oauth.UserClaim, "oauth-user-claim", agentmemmcp.DefaultUserClaim, "http: the token `claim` that names the user")
	fl.StringSliceVar(&f.oauthScopes, "oauth-scope", nil, "http: a `scope` every token must carry (repeatable)")
	fl.StringVar(&f.oauthAdminScope, "oauth-admin-scope", DefaultAdminScope, "http: the `scope` that makes a token an admin of the console and API (every namespace; empty: none)")
	fl.Int64Var(&f.maxBody, "max-body", agentmemmcp.DefaultMaxBodyBytes, "http: the largest request body of MCP and of the API's file writes and restores, in `bytes` (413 beyond)")
	fl.Int64Var(&f.maxImport, "max-import", console.DefaultMaxImportBytes, "http: the largest archive an import takes (the API's …/import, the console's upload), in `bytes` (413 beyond, nothing written)")
	fl.DurationVar(&f.sessionTimeout, "session-timeout", 0, "http: close sessions idle this long (0: never)")
	fl.DurationVar(&f.pollInterval, "poll-interval", agentmemmcp.DefaultPollInterval, "how often subscribed resources are checked for changes made by other processes (negative: never)")
	fl.StringVar(&f.model, "model", "", "http: the `PROVIDER:MODEL` behind the console's \"Consolidate now\" (as agentmem consolidate --model: anthropic:MODEL; empty: no button)")
	fl.StringVar(&f.publicURL, "public-url", "", "http: the `URL` browsers reach this server at, behind a TLS proxy (https://…: the console's cookie is Secure)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a shutdown (SIGINT, SIGTERM) waits for calls in flight")
	fl.VisitAll(func(f *pflag.Flag) { f.Usage += " ($" + envName(f.Name) + ")" })
	// After the variables' names: --version has none (a deployment's
	// health checks and image labels ask the binary, not the environment).
	fl.BoolVar(&showVersion, "version", false, "print the version (as agentmem --version) and exit")
	cmd.AddCommand(a.keygenCmd())
	return cmd
}

// httpFlags are the flags of serve that only --transport http uses.
var httpFlags = []string{"keys", "oauth-issuer", "oauth-audience", "oauth-jwks-url", "oauth-user-claim", "oauth-scope", "oauth-admin-scope", "listen", "path", "max-body", "max-import", "session-timeout", "public-url"}

// serve checks the flags, opens the store and serves until the client
// leaves (stdio) or a signal arrives.
func (a *app) serve(cmd *cobra.Command, f *serveFlags) error {
	var opts agentmemmcp.Options
	switch f.transport {
	case "stdio":
		if f.user == "" {
			return usagef("serve: --transport stdio serves one user: give it with --user ID")
		}
		if memory.EscapeNamespace(f.user) == "" {
			return usagef("serve: --user %q is not a valid user id", f.user)
		}
		opts.Namespace = agentmemmcp.FixedUser(f.user)
	case "http":
		if f.keys == "" && f.oauth.Issuer == "" {
			return usagef("serve: --transport http needs --keys FILE (API keys; agentmem serve keygen makes one) or --oauth-issuer URL with --oauth-audience URL: it never serves without authentication")
		}
		if (f.oauth.Issuer == "") != (f.oauth.Audience == "") {
			return usagef("serve: give --oauth-issuer and --oauth-audience together (the audience is this server's canonical URL)")
		}
		if f.oauth.Issuer == "" && (f.oauth.JWKSURL != "" || len(f.oauthScopes) > 0 || cmd.Flags().Changed("oauth-user-claim") || cmd.Flags().Changed("oauth-admin-scope")) {
			return usagef("serve: the --oauth-* flags need --oauth-issuer and --oauth-audience")
		}
		if f.user != "" {
			return usagef("serve: --user is for stdio; over http the API key names the user")
		}
		if f.maxBody <= 0 {
			return usagef("serve: %s must be positive", flagName(cmd, "max-body"))
		}
		if f.maxImport <= 0 {
			return usagef("serve: %s must be positive", flagName(cmd, "max-import"))
		}
		if f.path != "" && (!strings.HasPrefix(f.path, "/") || f.path == healthzPath || f.path == readyzPath ||
			strings.HasPrefix(f.path, "/.well-known/") || strings.ContainsAny(f.path, "?#") ||
			slices.ContainsFunc(consolePrefixes, func(p string) bool { return strings.HasPrefix(f.path+"/", p) })) {
			return usagef("serve: %s %q: give a URL path starting with /, such as /mcp, other than %s, %s, /.well-known/…, %s… and %s…",
				flagName(cmd, "path"), f.path, healthzPath, readyzPath, consolePrefixes[0], consolePrefixes[1])
		}
		if f.publicURL != "" {
			if u, err := url.Parse(f.publicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				return usagef("serve: %s %q: give the absolute URL browsers reach this server at, such as https://memory.example.com", flagName(cmd, "public-url"), f.publicURL)
			}
		}
		if strings.ContainsFunc(f.oauthAdminScope, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r == 0x7f }) {
			return usagef("serve: %s %q: a scope has no spaces, quotes or control characters", flagName(cmd, "oauth-admin-scope"), f.oauthAdminScope)
		}
	default:
		return usagef("serve: --transport %q: want stdio or http", f.transport)
	}
	if f.shutdownTimeout <= 0 {
		return usagef("serve: --shutdown-timeout must be positive")
	}
	if f.transport == "stdio" {
		for _, name := range httpFlags {
			if cmd.Flags().Changed(name) {
				return usagef("serve: %s: --keys and --oauth-* are for --transport http, as are --listen, --path, --max-body, --max-import, --session-timeout and --public-url; stdio serves --user", flagName(cmd, name))
			}
		}
	}
	var auth agentmemmcp.HTTPOptions
	if f.keys != "" {
		var err error
		if auth.Keys, err = agentmemmcp.OpenKeyFile(f.keys); err != nil {
			return fmt.Errorf("agentmem: serve: %w", err)
		}
	}
	if f.oauth.Issuer != "" {
		f.oauth.Scopes = f.oauthScopes
		var err error
		if auth.OAuth, err = agentmemmcp.NewOAuthVerifier(cmd.Context(), f.oauth); err != nil {
			return fmt.Errorf("agentmem: serve: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return a.withStore(cmd, func(_ context.Context, s *store.Store) error {
		mem, err := memory.New(s, nil)
		if err != nil {
			return err
		}
		opts.Version = "agentmem-cli"
		opts.PollInterval = f.pollInterval
		opts.OnError = func(_ context.Context, err error) { fmt.Fprintf(a.stderr, "agentmem: serve: %v\n", err) }
		srv, err := agentmemmcp.NewServer(mem, &opts)
		if err != nil {
			return err
		}
		if f.transport == "stdio" {
			return a.serveStdio(ctx, srv, f)
		}
		api, err := a.consoleHandler(s, &auth, f)
		if err != nil {
			return err
		}
		return a.serveHTTP(ctx, srv, s, &auth, api, f)
	})
}

// serveStdio serves srv on stdin and stdout until the client leaves or
// ctx is done (a signal); then, as over HTTP, new requests are refused,
// the call in flight finishes (bounded by f.shutdownTimeout) and its
// response is written, and the session closes.
func (a *app) serveStdio(ctx context.Context, srv *agentmemmcp.Server, f *serveFlags) error {
	t := &mcpsdk.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}}
	// The session's own context outlives the signal, so that the call in
	// flight is not cancelled with it; cut cancels it.
	sctx, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	served := make(chan error, 1)
	go func() { served <- srv.Run(sctx, t) }()
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("agentmem: serve: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	fmt.Fprintln(a.stderr, "agentmem: serve: shutting down, finishing calls in flight")
	dctx, cancel := context.WithTimeout(sctx, f.shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(dctx)
	if err != nil {
		cut()
	}
	// The session is closed; a read of stdin may still be blocked (the
	// client keeps its end open): the process exits without it.
	select {
	case <-served:
	case <-time.After(time.Second):
	}
	if err != nil {
		return fmt.Errorf("agentmem: serve: shutdown: calls still in flight after --shutdown-timeout %v were cut: %w", f.shutdownTimeout, err)
	}
	return nil
}

// nopWriteCloser is an io.WriteCloser whose Close does nothing: the
// command's stdout outlives the MCP session.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
