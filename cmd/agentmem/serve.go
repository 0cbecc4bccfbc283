package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

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
	maxBody         int64
	sessionTimeout  time.Duration
	shutdownTimeout time.Duration
	pollInterval    time.Duration
}

func (a *app) serveCmd() *cobra.Command {
	var f serveFlags
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
the audience's path too; 404 elsewhere). Beside it, without authentication,
GET /healthz answers 200 while the process serves (it asks the store nothing)
and GET /readyz 200 when the store answers one bounded read within 5s, else
503: point liveness and readiness probes at them. Every MCP request needs
"Authorization: Bearer <key>" (a 401 carries WWW-Authenticate: Bearer
realm="agentmem"); the key
file --keys (or OAuth, below: serve never runs without authentication) maps hashed
keys to users, one line "sha256:<hex> <user>" each; "agentmem serve keygen"
makes a key and its line. A user only ever sees its own files, and each write
records who made it (metadata updated_by = the user, client = the MCP client's
name; over stdio updated_by is --user), which agentmem log shows. The file is
re-read when it changes, so keys are added and revoked without a restart.
Bodies over --max-body bytes get 413.

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
to expose it beyond this machine.`,
		Example: `  agentmem serve --store sqlite:$HOME/memory.db --user me
  agentmem serve keygen --user ana   # the key, then its line for the key file
  agentmem serve --transport http --keys /etc/agentmem/keys --store 'postgres://app@db/agents'
  agentmem serve --transport http --store sqlite:/srv/memory.db \
      --oauth-issuer https://auth.example.com/ --oauth-audience https://memory.example.com/mcp`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd, &f) },
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
	fl.Int64Var(&f.maxBody, "max-body", agentmemmcp.DefaultMaxBodyBytes, "http: the largest request body, in `bytes` (413 beyond)")
	fl.DurationVar(&f.sessionTimeout, "session-timeout", 0, "http: close sessions idle this long (0: never)")
	fl.DurationVar(&f.pollInterval, "poll-interval", agentmemmcp.DefaultPollInterval, "how often subscribed resources are checked for changes made by other processes (negative: never)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a shutdown (SIGINT, SIGTERM) waits for calls in flight")
	cmd.AddCommand(a.keygenCmd())
	return cmd
}

// httpFlags are the flags of serve that only --transport http uses.
var httpFlags = []string{"keys", "oauth-issuer", "oauth-audience", "oauth-jwks-url", "oauth-user-claim", "oauth-scope", "listen", "path", "max-body", "session-timeout"}

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
		if f.oauth.Issuer == "" && (f.oauth.JWKSURL != "" || len(f.oauthScopes) > 0 || cmd.Flags().Changed("oauth-user-claim")) {
			return usagef("serve: the --oauth-* flags need --oauth-issuer and --oauth-audience")
		}
		if f.user != "" {
			return usagef("serve: --user is for stdio; over http the API key names the user")
		}
		if f.maxBody <= 0 {
			return usagef("serve: --max-body must be positive")
		}
		if f.path != "" && (!strings.HasPrefix(f.path, "/") || f.path == healthzPath || f.path == readyzPath ||
			strings.HasPrefix(f.path, "/.well-known/") || strings.ContainsAny(f.path, "?#")) {
			return usagef("serve: --path %q: give a URL path starting with /, such as /mcp, other than %s, %s and /.well-known/…", f.path, healthzPath, readyzPath)
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
				return usagef("serve: --%s: --keys and --oauth-* are for --transport http, as are --listen, --path, --max-body and --session-timeout; stdio serves --user", name)
			}
		}
	}
	var auth agentmemmcp.HTTPOptions
	if f.keys != "" {
		var err error
		if auth.Keys, err = agentmemmcp.OpenKeyFile(f.keys); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	if f.oauth.Issuer != "" {
		f.oauth.Scopes = f.oauthScopes
		var err error
		if auth.OAuth, err = agentmemmcp.NewOAuthVerifier(cmd.Context(), f.oauth); err != nil {
			return fmt.Errorf("serve: %w", err)
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
		return a.serveHTTP(ctx, srv, s, &auth, f)
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
			return fmt.Errorf("serve: %w", err)
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
		return fmt.Errorf("serve: shutdown: calls still in flight after --shutdown-timeout %v were cut: %w", f.shutdownTimeout, err)
	}
	return nil
}

// serveHTTP serves srv on f.listen until ctx is done, then shuts down
// gracefully: no new connections, calls in flight finish (bounded by
// f.shutdownTimeout), then every session is closed (ending the clients'
// notification streams) and the server returns.
func (a *app) serveHTTP(ctx context.Context, srv *agentmemmcp.Server, s *store.Store, auth *agentmemmcp.HTTPOptions, f *serveFlags) error {
	auth.MaxBodyBytes, auth.SessionTimeout, auth.Path = f.maxBody, f.sessionTimeout, f.path
	h, err := a.httpHandler(srv, s, auth)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", f.listen, err)
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
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(a.stderr, "agentmem: serve: shutting down, finishing calls in flight")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("serve: shutdown: calls still in flight after --shutdown-timeout %v were cut: %w", f.shutdownTimeout, err)
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

// httpHandler is what serve --transport http answers: one mux with MCP
// at its path (srv.Mount) and beside it GET /healthz (200 while the
// process serves; no authentication, no store call) and GET /readyz (200
// when the store answers a bounded point read within readyTimeout, else
// 503). Any other module served on the listener (a console, an API)
// mounts on this mux too.
func (a *app) httpHandler(srv *agentmemmcp.Server, s *store.Store, auth *agentmemmcp.HTTPOptions) (http.Handler, error) {
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
	return mux, nil
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
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make a random API key for `agentmem serve --transport http`",
		Long: `keygen prints a new random API key (256 bits, hex) on the first line, for the
client's "Authorization: Bearer <key>" header, and on the second the line to
append to the key file of serve --keys: "sha256:<hex of SHA-256 of the key> <user>".
The key file holds only the hash; the key is shown this once.`,
		Example: `  agentmem serve keygen --user ana | tee /dev/stderr | tail -n 1 >> /etc/agentmem/keys`,
		Args:    args(cobra.NoArgs),
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
			fmt.Fprintf(a.stdout, "%s %s\n", agentmemmcp.HashKey(key), user)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user `ID` the key serves (required)")
	return cmd
}
