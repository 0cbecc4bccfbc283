package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentmem/agentmem/console"
	"github.com/agentmem/agentmem/core/memory/pruned"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// DefaultAdminScope is the OAuth scope that makes a token an admin of the
// console and the API (serve --oauth-admin-scope).
const DefaultAdminScope = "agentmem:admin"

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
		opts.Consolidator, opts.ConsolidateOptions = m, &pruned.ConsolidateOptions{ModelID: name}
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
