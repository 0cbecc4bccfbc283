package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
}

// ErrHTTPOptions reports HTTPOptions without a way to authenticate, or
// with a Verifier beside Keys or OAuth.
var ErrHTTPOptions = errors.New("agentmem/mcp: HTTPOptions: set Keys, OAuth or both, or Verifier alone")

// Handler returns an http.Handler serving s over MCP's streamable HTTP
// transport, behind bearer-token authentication: a missing or unknown
// token gets 401, and each request reaches the notebook of its token's
// user (with the default [Options.Namespace]). A session is bound to the
// user that opened it: its id presented with another user's token gets
// 403. Request bodies are bounded (413). [Server.Shutdown] stops it
// gracefully. With [HTTPOptions.OAuth] it also
// serves the protected resource metadata document, without
// authentication. Mount the handler at the root of its host.
func (s *Server) Handler(opts *HTTPOptions) (http.Handler, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if (o.Keys == nil && o.OAuth == nil) == (o.Verifier == nil) {
		return nil, ErrHTTPOptions
	}
	if o.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("agentmem/mcp: MaxBodyBytes must be positive, got %d", o.MaxBodyBytes)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
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
	h := s.calls.track(auth.RequireBearerToken(verify, bearer)(s.stampHTTP(streamable, o.MaxBodyBytes)))
	if o.OAuth == nil {
		return h, nil
	}
	mux := http.NewServeMux()
	meta := auth.ProtectedResourceMetadataHandler(o.OAuth.Metadata())
	for _, p := range o.OAuth.MetadataPaths() {
		// Escaped, so that the audience's path is a literal pattern: a
		// space or a brace in it is not pattern syntax.
		mux.Handle((&url.URL{Path: p}).EscapedPath(), meta)
	}
	mux.Handle("/", h)
	return mux, nil
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

// stampHTTP bounds the body of a POST and stamps each tools/call in it with
// its session id and JSON-RPC id (see withRequestIDs). The session id is
// the Mcp-Session-Id header: the SDK answers an unknown one with 404 and
// another user's with 403, so it names this user's live session.
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
		session := r.Header.Get("Mcp-Session-Id")
		if session == "" {
			session = rand.Text()
		}
		body = stampBody(body, "http:"+session, s.opts.Observe != nil)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// stampBody stamps the tools/call requests of a JSON-RPC message or batch
// (and, with ids, every request; see stamp);
// a body it cannot decode is passed on unchanged for the SDK to refuse.
func stampBody(body []byte, session string, ids bool) []byte {
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		batch = []json.RawMessage{body}
	} else if len(batch) == 0 {
		return body
	}
	out := make([]json.RawMessage, 0, len(batch))
	for _, raw := range batch {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return body
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || !req.IsCall() || (req.Method != "tools/call" && !ids) {
			out = append(out, raw)
			continue
		}
		stamp(msg, session, ids)
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return body
		}
		out = append(out, b)
	}
	if len(out) == 1 && bytes.TrimSpace(body)[0] != '[' {
		return out[0]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return body
	}
	return b
}
