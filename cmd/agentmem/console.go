package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"os/user"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// DefaultConsoleListen is where `agentmem console` listens without
// --listen: loopback, on a free port the system picks.
const DefaultConsoleListen = "127.0.0.1:0"

// consoleClient is the client recorded (metadata client) with every
// change made through `agentmem console`.
const consoleClient = "console"

func (a *app) consoleCmd() *cobra.Command {
	var listen, who string
	shutdown := 10 * time.Second
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Open the web console on this machine, for the local store (one user, a one-time sign-in link)",
		Long: `console serves the web console and its JSON API (as serve --transport http
does) over the store, for you alone: it listens on loopback only (--listen,
default a free port of 127.0.0.1) and prints a sign-in link on stdout,
http://127.0.0.1:PORT/console/?token=TOKEN, the way notebook servers do.
The token is random and made at start-up; the first request that carries it
in the link answers a page whose button signs in (the console's session, an
HttpOnly, SameSite=Strict cookie) and the link then answers 403. The token is
this console's API key while it runs: its sign-in page takes it, and so does
the API ("Authorization: Bearer TOKEN", for scripts). Whoever signs in is an admin of the
whole store (every namespace); each change records --user (default: your
login name) as who made it, and "console" as the client. The store records
history as for agentmem restore, so changes made here can be undone.

It opens no browser: follow the link. On SIGINT or SIGTERM it finishes the
requests in flight and exits 0.`,
		Example: `  agentmem console --store sqlite:$HOME/memory.db
  agentmem console --listen 127.0.0.1:8788`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return usagef("console: --listen %q: want host:port, such as %s", listen, DefaultConsoleListen)
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return usagef("console: --listen %q: the local console listens on loopback only (127.0.0.1, ::1, localhost); to serve others use agentmem serve --transport http with --keys", listen)
			}
			if who == "" {
				who = loginName()
			}
			if memory.EscapeNamespace(who) == "" {
				return usagef("console: --user %q is not a valid user id", who)
			}
			s, err := a.openRecording(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return a.serveConsole(ctx, s, listen, who, shutdown)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", DefaultConsoleListen, "the loopback `host:port` to listen on (port 0: a free one)")
	fl.StringVar(&who, "user", "", "the user `ID` recorded as who made each change (default: your login name)")
	return cmd
}

// loginName is the current user's login name, else "console".
func loginName() string {
	if u, err := user.Current(); err == nil && memory.EscapeNamespace(u.Username) != "" {
		return u.Username
	}
	return consoleClient
}

// serveConsole serves the local console over s on listen until ctx is
// done, printing its sign-in link on stdout.
func (a *app) serveConsole(ctx context.Context, s *store.Store, listen, who string, shutdown time.Duration) error {
	l := newLocalSignIn(rand.Text(), console.Principal{User: who, Admin: true, Client: consoleClient})
	h, err := console.New(s, &console.Options{
		Authenticate: l.authenticate,
		Logger:       slog.New(slog.NewTextHandler(a.stderr, nil)),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("agentmem: console: listen on %s: %w", listen, err)
	}
	hs := &http.Server{Handler: l.wrap(consoleRouter(h, http.NotFoundHandler())), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(a.stderr, "agentmem: console on http://%s%s for %s: open the link below (it signs in once; Ctrl-C stops)\n",
		ln.Addr(), consolePrefixes[1], redact(a.storeURLOf()))
	fmt.Fprintf(a.stdout, "http://%s%s?token=%s\n", ln.Addr(), consolePrefixes[1], l.token)
	select {
	case err := <-served:
		return fmt.Errorf("agentmem: console: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdown)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("agentmem: console: shutdown: %w", err)
	}
	<-served
	return nil
}

// localSignIn is the authentication of `agentmem console`: one token,
// made at start-up, the key of its one admin principal, whose link
// (?token=) signs in once.
type localSignIn struct {
	token string
	p     console.Principal

	mu    sync.Mutex
	spent bool
}

func newLocalSignIn(token string, p console.Principal) *localSignIn {
	return &localSignIn{token: token, p: p}
}

// is reports whether s is the token, in constant time.
func (l *localSignIn) is(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(l.token)) == 1
}

// authenticate is the console's Options.Authenticate: the token as a
// bearer key (the console's sign-in page resolves a typed key the same
// way).
func (l *localSignIn) authenticate(r *http.Request) (console.Principal, error) {
	if token, ok := bearerToken(r); ok && l.is(token) {
		return l.p, nil
	}
	return console.Principal{}, fmt.Errorf("%w: not this console's token", console.ErrUnauthenticated)
}

// wrap serves the sign-in link in front of h: a GET or HEAD with ?token=
// the token, the first time, answers a page whose one button signs in
// with the token (a POST of it as the key to the console's sign-in, which
// starts the console's session); the token again, or another one, answers
// 403. Every other request goes to h.
func (l *localSignIn) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("token") || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		l.mu.Lock()
		ok := !l.spent && l.is(q.Get("token"))
		if ok {
			l.spent = true
		}
		l.mu.Unlock()
		if !ok {
			http.Error(w, "this sign-in link is not valid or was used already: restart agentmem console for a new one", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = signInPage.Execute(w, struct{ Action, Key string }{consolePrefixes[1] + "signin", l.token})
	})
}

// signInPage is what the sign-in link answers: one button that posts the
// token as the key to the console's sign-in (no script: the console's
// pages work with JavaScript off).
var signInPage = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentmem console</title></head>
<body><form method="post" action="{{.Action}}"><input type="hidden" name="key" value="{{.Key}}">
<p>Sign in to the agentmem console on this machine.</p><button type="submit" autofocus>Sign in</button></form></body></html>
`))
