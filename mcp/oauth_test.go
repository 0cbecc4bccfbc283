package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/mcp/oauthtest"
)

func newIssuer(t *testing.T) *oauthtest.Issuer {
	t.Helper()
	is, err := oauthtest.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	return is
}

func token(t *testing.T, sign func(string, jwt.MapClaims) (string, error), alg string, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := sign(alg, claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const audience = "https://memory.example.com/mcp"

func newVerifier(t *testing.T, o agentmemmcp.OAuthOptions) *agentmemmcp.OAuthVerifier {
	t.Helper()
	v, err := agentmemmcp.NewOAuthVerifier(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOAuthVerifierAcceptsOnlyValidTokens(t *testing.T) {
	is := newIssuer(t)
	// The JWKS URL is discovered from the issuer's metadata.
	v := newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience, JWKSMinRefresh: -1})
	with := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := is.Claims("ana", audience)
		change(c)
		return c
	}
	for _, alg := range []string{"RS256", "ES256"} {
		info, err := v.Verify(t.Context(), token(t, is.Token, alg, is.Claims("ana", audience)), nil)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if info.UserID != "ana" || info.Expiration.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("%s: token info %+v", alg, info)
		}
	}
	// A trailing slash on the audience is the same resource.
	if _, err := v.Verify(t.Context(), token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { c["aud"] = []string{"other", audience + "/"} })), nil); err != nil {
		t.Fatalf("audience list with a trailing slash: %v", err)
	}
	// Within the leeway (30s), a just-expired token passes.
	if _, err := v.Verify(t.Context(), token(t, is.Token, "ES256", with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-5 * time.Second).Unix() })), nil); err != nil {
		t.Fatalf("expired 5s ago, within the leeway: %v", err)
	}

	none := jwt.NewWithClaims(jwt.SigningMethodNone, is.Claims("ana", audience))
	none.Header["kid"] = "RS256-1"
	noneToken, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	// HS256 keyed with public material is the classic algorithm confusion.
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, is.Claims("ana", audience))
	hs.Header["kid"] = "RS256-1"
	hsToken, err := hs.SignedString([]byte("RS256-1"))
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"wrong audience":  token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { c["aud"] = "https://other.example.com/mcp" })),
		"no audience":     token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { delete(c, "aud") })),
		"wrong issuer":    token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })),
		"expired":         token(t, is.Token, "ES256", with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })),
		"no expiry":       token(t, is.Token, "ES256", with(func(c jwt.MapClaims) { delete(c, "exp") })),
		"not yet valid":   token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(2 * time.Minute).Unix() })),
		"no user":         token(t, is.Token, "RS256", with(func(c jwt.MapClaims) { delete(c, "sub") })),
		"bad signature":   token(t, is.Forge, "RS256", is.Claims("ana", audience)),
		"bad EC sig":      token(t, is.Forge, "ES256", is.Claims("ana", audience)),
		"unknown kid":     token(t, is.Unpublished, "ES256", is.Claims("ana", audience)),
		"alg none":        noneToken,
		"alg HS256":       hsToken,
		"not a JWT":       "key-ana",
		"tampered claims": tamper(t, token(t, is.Token, "RS256", is.Claims("ana", audience)), "bob"),
	}
	for name, tok := range bad {
		info, err := v.Verify(t.Context(), tok, nil)
		if !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: got %+v, %v; want auth.ErrInvalidToken", name, info, err)
		}
	}
}

// tamper replaces the subject in a signed token's payload, keeping the
// signature.
func tamper(t *testing.T, tok, user string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	var claims map[string]any
	raw, err := jwt.NewParser().DecodeSegment(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	claims["sub"] = user
	b, _ := json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}

func TestOAuthVerifierPicksUpRotatedKeys(t *testing.T) {
	is := newIssuer(t)
	v := newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience, JWKSURL: is.JWKSURL(), JWKSMinRefresh: time.Hour})
	if _, err := v.Verify(t.Context(), token(t, is.Token, "RS256", is.Claims("ana", audience)), nil); err != nil {
		t.Fatal(err)
	}
	fetches := is.Fetches()
	if _, err := is.Rotate("RS256"); err != nil {
		t.Fatal(err)
	}
	// Within JWKSMinRefresh of the last fetch, an unknown kid does not
	// fetch again: a flood of made-up kids cannot hammer the issuer.
	rotated := token(t, is.Token, "RS256", is.Claims("ana", audience))
	if _, err := v.Verify(t.Context(), rotated, nil); !errors.Is(err, auth.ErrInvalidToken) || is.Fetches() != fetches {
		t.Fatalf("rotated key within the refresh bound: err %v, fetches %d -> %d", err, fetches, is.Fetches())
	}

	v = newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience, JWKSURL: is.JWKSURL(), JWKSMinRefresh: -1})
	if _, err := is.Rotate("ES256"); err != nil {
		t.Fatal(err)
	}
	info, err := v.Verify(t.Context(), token(t, is.Token, "ES256", is.Claims("ana", audience)), nil)
	if err != nil || info.UserID != "ana" {
		t.Fatalf("token of a rotated key: %+v, %v", info, err)
	}
}

func TestOAuthVerifierConfig(t *testing.T) {
	is := newIssuer(t)
	for name, o := range map[string]agentmemmcp.OAuthOptions{
		"no issuer":         {Audience: audience},
		"no audience":       {Issuer: is.URL()},
		"relative audience": {Issuer: is.URL(), Audience: "/mcp"},
		"other issuer":      {Issuer: is.URL() + "/tenant", Audience: audience},
	} {
		if _, err := agentmemmcp.NewOAuthVerifier(t.Context(), o); !errors.Is(err, agentmemmcp.ErrOAuthConfig) {
			t.Errorf("%s: %v, want ErrOAuthConfig", name, err)
		}
	}
	_, err := agentmemmcp.NewOAuthVerifier(t.Context(), agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience, JWKSURL: is.URL() + "/nothing"})
	if !errors.Is(err, agentmemmcp.ErrJWKS) {
		t.Errorf("missing JWKS: %v, want ErrJWKS", err)
	}
}

// serveOAuth serves srv with OAuth (and API keys for keyUsers) on a
// loopback server whose URL is the audience.
func serveOAuth(t *testing.T, srv *agentmemmcp.Server, is *oauthtest.Issuer, scopes []string, keyUsers ...string) (*httptest.Server, string) {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	aud := "http://" + hs.Listener.Addr().String() + "/mcp"
	v := newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: aud, Scopes: scopes, JWKSMinRefresh: -1})
	o := &agentmemmcp.HTTPOptions{OAuth: v}
	if len(keyUsers) > 0 {
		keys, err := agentmemmcp.OpenKeyFile(keyFile(t, keyUsers...))
		if err != nil {
			t.Fatal(err)
		}
		o.Keys = keys
	}
	h, err := srv.Handler(o)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = h
	hs.Start()
	t.Cleanup(hs.Close)
	return hs, aud
}

func connectToken(t *testing.T, endpoint, tok string) *mcpsdk.ClientSession {
	t.Helper()
	tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{tok}}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTPOAuthBindsTheTokensUser(t *testing.T) {
	is := newIssuer(t)
	mem := newMemory(t)
	hs, aud := serveOAuth(t, newServer(t, mem, nil), is, nil, "carol")
	ana := connectToken(t, aud, token(t, is.Token, "ES256", is.Claims("ana", aud)))
	write(t, ana, "MEMORY.md", "- ana's note")
	if got := readAs(t, mem, "ana", "MEMORY.md"); got != "- ana's note\n" {
		t.Fatalf("ana's MEMORY.md = %q", got)
	}
	// API keys work beside OAuth, as their own users.
	carol := connectHTTP(t, hs, "carol")
	if res := call(t, carol, "read_memory", map[string]any{"file": "MEMORY.md"}, nil); !res.IsError {
		t.Fatalf("carol reads ana's notebook: %v", structured(t, res))
	}
	write(t, carol, "MEMORY.md", "- carol's note")
	if got := readAs(t, mem, "carol", "MEMORY.md"); got != "- carol's note\n" {
		t.Fatalf("carol's MEMORY.md = %q", got)
	}
	// A token for another resource (the audience is this server's URL) or
	// a forged one gets 401 with the resource metadata URL.
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	for name, tok := range map[string]string{
		"none":           "",
		"other audience": token(t, is.Token, "RS256", is.Claims("ana", "https://other.example.com/mcp")),
		"forged":         token(t, is.Forge, "RS256", is.Claims("ana", aud)),
		"unknown key":    token(t, is.Unpublished, "RS256", is.Claims("ana", aud)),
	} {
		resp := rawPost(t, aud, tok, init)
		// RFC 6750 §3: no error code for a request without credentials.
		want := `Bearer realm="agentmem", error="invalid_token", resource_metadata="` + hs.URL + `/.well-known/oauth-protected-resource/mcp"`
		if tok == "" {
			want = `Bearer realm="agentmem", resource_metadata="` + hs.URL + `/.well-known/oauth-protected-resource/mcp"`
		}
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("%s: status %d, WWW-Authenticate %q; want 401, %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
	// The metadata document, at the path-suffixed and the root well-known
	// paths, without authentication.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(hs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var meta oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", p, resp.StatusCode, err)
		}
		if meta.Resource != aud || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != is.URL() ||
			len(meta.BearerMethodsSupported) != 1 || meta.BearerMethodsSupported[0] != "header" {
			t.Fatalf("GET %s: %+v", p, meta)
		}
	}
}

func TestHTTPOAuthUserClaimAndScopes(t *testing.T) {
	is := newIssuer(t)
	mem := newMemory(t)
	hs := httptest.NewUnstartedServer(nil)
	aud := "http://" + hs.Listener.Addr().String() + "/"
	v := newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: aud, UserClaim: "email", Scopes: []string{"memory"}})
	h, err := newServer(t, mem, nil).Handler(&agentmemmcp.HTTPOptions{OAuth: v})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = h
	hs.Start()
	t.Cleanup(hs.Close)
	claims := is.Claims("subject-1", aud)
	claims["email"], claims["scope"] = "ana@example.com", "openid memory"
	cs := connectToken(t, aud, token(t, is.Token, "RS256", claims))
	write(t, cs, "MEMORY.md", "- by email")
	if got := readAs(t, mem, "ana@example.com", "MEMORY.md"); got != "- by email\n" {
		t.Fatalf("notebook of the email claim = %q", got)
	}
	claims["scope"] = "openid"
	resp := rawPost(t, aud, token(t, is.Token, "RS256", claims), []byte(`{}`))
	if want := `Bearer realm="agentmem", error="insufficient_scope", resource_metadata="`; resp.StatusCode != http.StatusForbidden ||
		!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) || !strings.HasSuffix(resp.Header.Get("WWW-Authenticate"), `, scope="memory"`) {
		t.Fatalf("token without the scope: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, err = http.Get(hs.URL + agentmemmcp.ProtectedResourceMetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"scopes_supported":["memory"]`) {
		t.Fatalf("metadata %s", body)
	}
}

func rawPost(t *testing.T, url, tok string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// An audience whose path holds characters that http.ServeMux patterns
// treat specially (a space, braces) is served literally, without a panic.
func TestHTTPOAuthAudiencePathIsLiteral(t *testing.T) {
	is := newIssuer(t)
	srv := newServer(t, newMemory(t), nil)
	for _, suffix := range []string{"/a%20b", "/mcp/%7Bx", "/%7Bid%7D"} {
		t.Run(suffix, func(t *testing.T) {
			hs := httptest.NewUnstartedServer(nil)
			aud := "http://" + hs.Listener.Addr().String() + suffix
			v := newVerifier(t, agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: aud})
			var h http.Handler
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Handler panics: %v", r)
					}
				}()
				var err error
				if h, err = srv.Handler(&agentmemmcp.HTTPOptions{OAuth: v}); err != nil {
					t.Fatal(err)
				}
			}()
			hs.Config.Handler = h
			hs.Start()
			t.Cleanup(hs.Close)
			for path, want := range map[string]int{
				agentmemmcp.ProtectedResourceMetadataPath + suffix:   http.StatusOK,
				agentmemmcp.ProtectedResourceMetadataPath + "/other": http.StatusNotFound, // no MCP there either
			} {
				resp, err := http.Get(hs.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
				}
			}
		})
	}
}
