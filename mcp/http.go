package mcp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/store"
)

// DefaultMaxBodyBytes bounds an HTTP request body by default (1 MiB).
const DefaultMaxBodyBytes = 1 << 20

// HTTPOptions configures [Server.Handler]. Set Keys, OAuth or both, or
// Verifier alone.
type HTTPOptions struct {
	// Keys verifies API keys from a key file ([OpenKeyFile]).
	Keys *KeyFile
	// OAuth makes the server an OAuth 2.1 resource server: bearer JWTs of
	// one issuer ([NewOAuthVerifier]). The handler then serves the
	// protected resource metadata (RFC 9728) at
	// [OAuthVerifier.MetadataPaths], and a 401 carries its URL in
	// WWW-Authenticate's resource_metadata.
	//
	// With Keys too, a token is first looked up as an API key, then
	// verified as a JWT. Both name users in one space: the key file's user
	// "ana" and a token whose user claim is "ana" reach the same notebook.
	// API keys are granted the OAuth scopes.
	OAuth *OAuthVerifier
	// Verifier verifies bearer tokens some other way. It must set
	// TokenInfo.UserID, the user whose notebook the request reaches, and
	// an Expiration. It excludes Keys and OAuth.
	Verifier auth.TokenVerifier
	// BearerOptions are passed to auth.RequireBearerToken (resource
	// metadata URL, required scopes). With Keys, AllowMissingExpiration is
	// always set, as API keys do not expire. With OAuth, an empty
	// ResourceMetadataURL and Scopes come from it.
	BearerOptions *auth.RequireBearerTokenOptions
	// MaxBodyBytes bounds each request body; a larger one is refused with
	// 413. Default [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// SessionTimeout closes sessions idle for this long. Zero means never.
	SessionTimeout time.Duration
	// Path is the URL path MCP is served at, exactly: another path is not
	// MCP (the [Server.Handler] answers it 404; a mux of your own given to
	// [Server.Mount] routes it elsewhere). It starts with "/" and is not
	// under "/.well-known/". By default MCP is served at [DefaultPath],
	// the root, and with OAuth also at the path of the audience (the
	// resource URL that clients following the metadata connect to).
	Path string
	// Realm is the realm of the Bearer challenge (WWW-Authenticate, RFC
	// 6750) of a 401 or 403. Default [DefaultRealm].
	Realm string
}

// Defaults of [HTTPOptions].
const (
	// DefaultPath is where MCP is served by default: the root.
	DefaultPath = "/"
	// DefaultRealm is the default realm of the Bearer challenge.
	DefaultRealm = "agentmem"
)

// ErrHTTPOptions reports invalid HTTPOptions: no way to authenticate, a
// Verifier beside Keys or OAuth, an invalid Path, bound or realm, or a
// Path the mux already serves. The message says which.
var ErrHTTPOptions = errors.New("mcp: invalid HTTPOptions")

// Handler returns an http.Handler serving s over MCP's streamable HTTP
// transport at [HTTPOptions.Path] (by default the root, and with OAuth the
// audience's path too), and 404 at any other path: it is a mux with only what [Server.Mount] registers. To serve
// more on the same listener (health checks, a console), build an
// http.ServeMux of your own and Mount s on it.
func (s *Server) Handler(opts *HTTPOptions) (http.Handler, error) {
	mux := http.NewServeMux()
	if err := s.Mount(mux, opts); err != nil {
		return nil, err
	}
	return mux, nil
}

// Mount registers s on mux: MCP's streamable HTTP transport at exactly
// [HTTPOptions.Path] (by default the root, and with OAuth the audience's
// path too), behind bearer-token authentication, and, with
// [HTTPOptions.OAuth], the protected resource metadata document (RFC 9728)
// at [OAuthVerifier.MetadataPaths], without authentication.
//
// A missing or unknown token gets 401 with an RFC 6750 challenge
// (WWW-Authenticate: Bearer realm="…", error="invalid_token" when a token
// was sent, and with OAuth resource_metadata="…"); a token without a
// required scope 403 (error="insufficient_scope"). Each request reaches
// the notebook of its token's user (with the default [Options.Namespace]).
// A session is bound to the user that opened it: its id presented with
// another user's token gets 403. Request bodies are bounded (413).
// [Server.Shutdown] stops it gracefully.
//
// It fails, registering nothing, with [ErrHTTPOptions] for options
// without a way to authenticate, and for an invalid Path, bound or realm,
// or a Path mux already serves.
func (s *Server) Mount(mux *http.ServeMux, opts *HTTPOptions) error {
	if mux == nil {
		return fmt.Errorf("%w: pass a mux to Mount, not nil: %w", ErrHTTPOptions, store.ErrNilArgument)
	}
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if (o.Keys == nil && o.OAuth == nil) == (o.Verifier == nil) {
		return fmt.Errorf("%w: set Keys, OAuth or both, or Verifier alone", ErrHTTPOptions)
	}
	if o.MaxBodyBytes < 0 {
		return fmt.Errorf("%w: MaxBodyBytes must be positive, got %d", ErrHTTPOptions, o.MaxBodyBytes)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	o.Realm = cmp.Or(o.Realm, DefaultRealm)
	paths := []string{o.Path}
	if o.Path == "" {
		paths = []string{DefaultPath}
		if o.OAuth != nil {
			if p := o.OAuth.resourcePath(); p != DefaultPath {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "/.well-known/") || strings.ContainsAny(p, "?#") {
			return fmt.Errorf("%w: Path must start with \"/\", hold no query and not be under /.well-known/, got %q", ErrHTTPOptions, p)
		}
	}
	if strings.ContainsFunc(o.Realm, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("%w: Realm must hold no control characters", ErrHTTPOptions)
	}
	bearer := &auth.RequireBearerTokenOptions{}
	if o.BearerOptions != nil {
		*bearer = *o.BearerOptions
	}
	verify := o.Verifier
	if verify == nil {
		verify = combined(o.Keys, o.OAuth)
	}
	if o.Keys != nil {
		bearer.AllowMissingExpiration = true
	}
	if o.OAuth != nil {
		if bearer.ResourceMetadataURL == "" {
			bearer.ResourceMetadataURL = o.OAuth.MetadataURL()
		}
		if len(bearer.Scopes) == 0 {
			bearer.Scopes = o.OAuth.o.Scopes
		}
	}
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.sdk },
		&mcpsdk.StreamableHTTPOptions{
			SessionTimeout:      o.SessionTimeout,
			MaxRequestBodyBytes: o.MaxBodyBytes,
			Logger:              s.opts.Logger,
		})
	h := s.calls.track(challenge(verify, bearer, o.Realm, s.stampHTTP(streamable, o.MaxBodyBytes)))
	var routes []route
	for _, p := range paths {
		routes = append(routes, route{p, h})
	}
	if o.OAuth != nil {
		meta := auth.ProtectedResourceMetadataHandler(o.OAuth.Metadata())
		for _, p := range o.OAuth.MetadataPaths() {
			routes = append(routes, route{p, meta})
		}
	}
	return register(mux, routes)
}

// route is one path Mount serves.
type route struct {
	path string
	h    http.Handler
}

// exactPattern is the ServeMux pattern of exactly path: escaped, so that
// a space or a brace in it is not pattern syntax, and anchored with {$}
// when it ends in "/" (which would otherwise match the whole subtree).
func exactPattern(path string) string {
	p := (&url.URL{Path: path}).EscapedPath()
	if strings.HasSuffix(p, "/") {
		p += "{$}"
	}
	return p
}

// register adds routes to mux. A path mux already serves with the same
// pattern is refused before anything is added; any other conflict
// ServeMux.Handle panics on is returned as an error.
func register(mux *http.ServeMux, routes []route) (err error) {
	for _, r := range routes {
		if _, p := mux.Handler(&http.Request{Method: http.MethodPost, URL: &url.URL{Path: r.path}}); p == exactPattern(r.path) {
			return fmt.Errorf("%w: the mux already serves %s", ErrHTTPOptions, r.path)
		}
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", ErrHTTPOptions, v)
		}
	}()
	for _, r := range routes {
		mux.Handle(exactPattern(r.path), r.h)
	}
	return nil
}

// combined verifies a token as an API key, then as a JWT. An API key gets
// the OAuth scopes, so that the scope check passes.
func combined(keys *KeyFile, oauth *OAuthVerifier) auth.TokenVerifier {
	return func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		if keys != nil {
			info, err := keys.Verify(ctx, token, r)
			if err == nil && oauth != nil {
				info.Scopes = oauth.o.Scopes
			}
			if oauth == nil || !errors.Is(err, auth.ErrInvalidToken) {
				return info, err
			}
		}
		return oauth.Verify(ctx, token, r)
	}
}

// challenge checks the bearer token (auth.RequireBearerToken) before next,
// and gives its 401 and 403 the challenge of RFC 6750 §3: Bearer
// realm="…", error="invalid_token" (401) or "insufficient_scope" (403)
// when a bearer token was sent (none when the request had no credentials,
// as the RFC asks), then the SDK's resource_metadata and scope. next
// writes to the client's ResponseWriter itself.
func challenge(verify auth.TokenVerifier, bearer *auth.RequireBearerTokenOptions, realm string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r) })
		cw := &challengeWriter{ResponseWriter: w, r: r, realm: realm, bearer: bearer}
		auth.RequireBearerToken(verify, bearer)(passed).ServeHTTP(cw, r)
	})
}

// challengeWriter is the ResponseWriter of the token check alone: it sets
// WWW-Authenticate on a 401 or 403.
type challengeWriter struct {
	http.ResponseWriter
	r      *http.Request
	realm  string
	bearer *auth.RequireBearerTokenOptions
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		params := []string{"realm=" + quoted(w.realm)}
		scheme, _, _ := strings.Cut(strings.TrimSpace(w.r.Header.Get("Authorization")), " ")
		if strings.EqualFold(scheme, "Bearer") {
			if code == http.StatusForbidden {
				params = append(params, `error="insufficient_scope"`)
			} else {
				params = append(params, `error="invalid_token"`)
			}
		}
		if w.bearer.ResourceMetadataURL != "" {
			params = append(params, "resource_metadata="+quoted(w.bearer.ResourceMetadataURL))
		}
		if len(w.bearer.Scopes) > 0 {
			params = append(params, "scope="+quoted(strings.Join(w.bearer.Scopes, " ")))
		}
		w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	}
	w.ResponseWriter.WriteHeader(code)
}

// quoted is s as an HTTP quoted-string (RFC 9110 §5.6.4).
func quoted(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// stampHTTP bounds the body of a POST and stamps the requests in it (see
// stamper). The session is the Mcp-Session-Id header: the SDK answers an
// unknown one with 404 and another user's with 403, so it names this
// user's live session.
func (s *Server) stampHTTP(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		}
		body = s.stamper("http", r.Header.Get("Mcp-Session-Id")).body(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}
