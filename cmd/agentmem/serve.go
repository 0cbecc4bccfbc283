package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

// DefaultAdminScope is the OAuth scope that makes a token an admin of the
// console and the API (serve --oauth-admin-scope).
const DefaultAdminScope = "agentmem:admin"

// envPrefix starts the environment variable of each flag of serve.
const envPrefix = "AGENTMEM_"

// envName is the environment variable of the flag name: AGENTMEM_ and
// the name in capitals, "-" as "_".
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envInherited are the inherited flags serve also takes from the
// environment (--store has AGENTMEM_STORE of its own).
var envInherited = []string{"timeout"}

// flagsFromEnv sets each flag of cmd not given on the command line from
// its environment variable, when that is set and not empty. A value the flag refuses
// fails with exit 2, naming the variable.
func flagsFromEnv(cmd *cobra.Command) error {
	var err error
	set := func(fl *pflag.Flag) {
		v, ok := os.LookupEnv(envName(fl.Name))
		if !ok || v == "" || fl.Changed || err != nil || fl.Name == "version" {
			return
		}
		if e := fl.Value.Set(v); e != nil {
			err = usagef("%s: $%s=%q: %v", cmd.Name(), envName(fl.Name), v, e)
			return
		}
		fl.Changed = true
		if fl.Annotations == nil {
			fl.Annotations = map[string][]string{}
		}
		fl.Annotations[envAnnotation] = []string{envName(fl.Name)}
	}
	cmd.LocalFlags().VisitAll(set)
	for _, name := range envInherited {
		if fl := cmd.Flags().Lookup(name); fl != nil {
			set(fl)
		}
	}
	return err
}

// envAnnotation marks the flags flagsFromEnv set, so that an error can
// name the variable rather than the flag.
const envAnnotation = "agentmem_env"

// flagName names a flag as the user gave it: --name, or $AGENTMEM_NAME
// when it came from the environment.
func flagName(cmd *cobra.Command, name string) string {
	if fl := cmd.Flags().Lookup(name); fl != nil && fl.Annotations[envAnnotation] != nil {
		return "$" + envName(name)
	}
	return "--" + name
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

// consoleHandler is the console and its JSON API over s, authenticated by
// the same keys and OAuth verifier as MCP (see principalFunc).
func (a *app) consoleHandler(s *store.Store, auth *agentmemmcp.HTTPOptions, f *serveFlags) (http.Handler, error) {
	opts := &console.Options{
		Authenticate:   principalFunc(auth.Keys, auth.OAuth, f.oauthScopes, f.oauthAdminScope),
		MaxBodyBytes:   f.maxBody,
		MaxImportBytes: f.maxImport,
		Logger:         slog.New(slog.NewTextHandler(a.stderr, nil)),
		// Behind a proxy that terminates TLS serve sees plain HTTP: the
		// public URL says whether browsers use HTTPS.
		SecureCookie: strings.HasPrefix(f.publicURL, "https://"),
	}
	if auth.OAuth != nil {
		opts.ResourceMetadataURL = auth.OAuth.MetadataURL()
	}
	if f.model != "" {
		m, err := openModel(f.model)
		if err != nil {
			return nil, err
		}
		_, name, _ := strings.Cut(f.model, ":")
		opts.Consolidator, opts.ConsolidateOptions = m, &memory.ConsolidateOptions{ModelID: name}
	}
	return console.New(s, opts)
}

// apiClient is the client recorded (metadata client) for the console's
// and API's writes made with a bearer key or token.
const apiClient = "api"

// principalFunc resolves the console's principal from the request's
// bearer token, as MCP does: an API key of keys first (its role says
// whether it is an admin), then a JWT of oauth, which must carry every
// scope of required and is an admin when it carries adminScope. No token,
// an unknown key or an invalid or insufficient token is
// console.ErrUnauthenticated (401); a key file that cannot be read or a
// JWKS that cannot be fetched is another error (500): it fails closed.
func principalFunc(keys *agentmemmcp.KeyFile, oauth *agentmemmcp.OAuthVerifier, required []string, adminScope string) func(*http.Request) (console.Principal, error) {
	return func(r *http.Request) (console.Principal, error) {
		token, ok := bearerToken(r)
		if !ok {
			return console.Principal{}, console.ErrUnauthenticated
		}
		if keys != nil {
			info, err := keys.Verify(r.Context(), token, r)
			if err == nil {
				return console.Principal{User: info.UserID, Admin: agentmemmcp.IsAdmin(info), Client: apiClient}, nil
			}
			if !errors.Is(err, auth.ErrInvalidToken) {
				return console.Principal{}, err
			}
		}
		if oauth == nil {
			return console.Principal{}, fmt.Errorf("%w: unknown API key", console.ErrUnauthenticated)
		}
		info, err := oauth.Verify(r.Context(), token, r)
		switch {
		case errors.Is(err, auth.ErrInvalidToken):
			return console.Principal{}, fmt.Errorf("%w: %w", console.ErrUnauthenticated, err)
		case err != nil:
			return console.Principal{}, err
		case !info.Expiration.IsZero() && time.Now().After(info.Expiration):
			return console.Principal{}, fmt.Errorf("%w: the token expired", console.ErrUnauthenticated)
		}
		for _, sc := range required {
			if !slices.Contains(info.Scopes, sc) {
				return console.Principal{}, fmt.Errorf("%w: the token lacks the scope %q", console.ErrUnauthenticated, sc)
			}
		}
		admin := adminScope != "" && slices.Contains(info.Scopes, adminScope)
		return console.Principal{User: info.UserID, Admin: admin, Client: apiClient}, nil
	}
}

// bearerToken is the token of the request's "Authorization: Bearer …"
// header (the scheme in any case).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// serveHTTP serves srv, and api beside it (nil: none), on f.listen until
// ctx is done, then shuts down gracefully: no new connections, calls in
// flight finish (bounded by f.shutdownTimeout), then every session is
// closed (ending the clients' notification streams) and the server
// returns.
func (a *app) serveHTTP(ctx context.Context, srv *agentmemmcp.Server, s *store.Store, auth *agentmemmcp.HTTPOptions, api http.Handler, f *serveFlags) error {
	auth.MaxBodyBytes, auth.SessionTimeout, auth.Path = f.maxBody, f.sessionTimeout, f.path
	h, err := a.httpHandler(srv, s, auth, api)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("agentmem: serve: listen on %s: %w", f.listen, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var sctx context.Context // set before hs.Shutdown runs this
	hs.RegisterOnShutdown(func() {
		// Shutdown waits for active connections; a session's event stream
		// (GET) never ends by itself, so the MCP server refuses new
		// requests, lets the calls in flight finish, then closes the
		// sessions.
		_ = srv.Shutdown(sctx)
	})
	var by []string
	if f.keys != "" {
		by = append(by, "API keys from "+f.keys)
	}
	if f.oauth.Issuer != "" {
		by = append(by, "OAuth tokens of "+f.oauth.Issuer+" for "+f.oauth.Audience)
	}
	at := f.path
	if at == "" {
		at = agentmemmcp.DefaultPath
	}
	fmt.Fprintf(a.stderr, "agentmem: serving MCP on http://%s%s (%s); health at %s, readiness at %s\n",
		ln.Addr(), at, strings.Join(by, "; "), healthzPath, readyzPath)
	if api != nil {
		fmt.Fprintf(a.stderr, "agentmem: serving the API on http://%s%s and the console on http://%s%s\n",
			ln.Addr(), consolePrefixes[0]+"v1/", ln.Addr(), consolePrefixes[1])
		if f.publicURL != "" {
			fmt.Fprintf(a.stderr, "agentmem: browsers reach the console at %s%s (its session cookie Secure: %v)\n",
				strings.TrimSuffix(f.publicURL, "/"), consolePrefixes[1], strings.HasPrefix(f.publicURL, "https://"))
		}
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("agentmem: serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(a.stderr, "agentmem: serve: shutting down, finishing calls in flight")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("agentmem: serve: shutdown: calls still in flight after --shutdown-timeout %v were cut: %w", f.shutdownTimeout, err)
	}
	<-served // http.ErrServerClosed
	return nil
}

// The paths of the probes serve answers beside MCP, without authentication.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// readyTimeout bounds the store read of one /readyz.
const readyTimeout = 5 * time.Second

// readyProbe is the path /readyz reads: one segment, so never a notebook
// file (those are <namespace>/<agent>/<file>); absent is ready.
const readyProbe = "agentmem-readyz"

// consolePrefixes are where the console handler serves: its JSON API and
// its pages. MCP's --path may not be under them.
var consolePrefixes = []string{"/api/", "/console/"}

// httpHandler is what serve --transport http answers: one mux with MCP
// at its path (srv.Mount) and beside it GET /healthz (200 while the
// process serves; no authentication, no store call) and GET /readyz (200
// when the store answers a bounded point read within readyTimeout, else
// 503). Beside them api, the console: its JSON API at /api/v1/ and its
// pages under /console/ (consoleRouter). Every other path is 404.
func (a *app) httpHandler(srv *agentmemmcp.Server, s *store.Store, auth *agentmemmcp.HTTPOptions, api http.Handler) (http.Handler, error) {
	mux := http.NewServeMux()
	if err := srv.Mount(mux, auth); err != nil {
		return nil, err
	}
	mux.HandleFunc("GET "+healthzPath, func(w http.ResponseWriter, _ *http.Request) {
		probeReply(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET "+readyzPath, func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if _, err := s.Read(ctx, readyProbe, 1); err != nil && !errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(a.stderr, "agentmem: serve: %s: the store did not answer: %v\n", readyzPath, err)
			probeReply(w, http.StatusServiceUnavailable, "the store did not answer")
			return
		}
		probeReply(w, http.StatusOK, "ready")
	})
	if api == nil {
		return mux, nil
	}
	return consoleRouter(api, mux), nil
}

// consoleRouter sends the paths under /api/ to api whole, those under
// /console/ to api without the prefix (its pages find their base path
// from the request), and every other to mux. api refuses a path that is
// not clean itself (400), rather than the mux redirecting it elsewhere.
func consoleRouter(api, mux http.Handler) http.Handler {
	pages := http.StripPrefix(strings.TrimSuffix(consolePrefixes[1], "/"), api)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, consolePrefixes[0]):
			api.ServeHTTP(w, r)
		case strings.HasPrefix(p, consolePrefixes[1]):
			pages.ServeHTTP(w, r)
		case p+"/" == consolePrefixes[1]:
			http.Redirect(w, r, consolePrefixes[1], http.StatusMovedPermanently)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// probeReply answers a probe with a short uncached text.
func probeReply(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, text+"\n")
}

// nopWriteCloser is an io.WriteCloser whose Close does nothing: the
// command's stdout outlives the MCP session.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

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
