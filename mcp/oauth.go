package mcp

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agentmem/agentmem/core/store"
)

// Defaults of [OAuthOptions].
const (
	// DefaultUserClaim is the JWT claim that names the user.
	DefaultUserClaim = "sub"
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 30 * time.Second
	// DefaultJWKSMinRefresh is the shortest time between two fetches of
	// the JWKS caused by tokens with unknown key ids.
	DefaultJWKSMinRefresh = 10 * time.Second
	// DefaultJWKSMaxAge is how long a fetched JWKS is trusted before it
	// is fetched again (so a key the issuer removed stops working).
	DefaultJWKSMaxAge = time.Hour
)

// ProtectedResourceMetadataPath is the well-known path of the OAuth 2.0
// protected resource metadata document (RFC 9728).
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// maxJSONDocument bounds the issuer metadata and JWKS documents read.
const maxJSONDocument = 1 << 20

// signingMethods are the JWS algorithms accepted. "none" and the HMAC
// algorithms never are: an access token is signed by the issuer's
// private key and checked with its public key.
var signingMethods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"}

// OAuthOptions configures [NewOAuthVerifier]: the server is an OAuth 2.1
// resource server that accepts JWT access tokens from one issuer.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer identifier (its URL,
	// such as "https://auth.example.com/"). A token's iss must equal it.
	// Required.
	Issuer string
	// Audience is this resource's canonical URL (RFC 8707), such as
	// "https://memory.example.com/mcp": a token's aud must contain it
	// (a trailing "/" is ignored on both). It is also the "resource" of
	// the protected resource metadata. Required.
	Audience string
	// JWKSURL is where the issuer publishes its signing keys. Empty means
	// discovered from the issuer's metadata: the jwks_uri of
	// <issuer>/.well-known/oauth-authorization-server (RFC 8414), else of
	// <issuer>/.well-known/openid-configuration.
	JWKSURL string
	// UserClaim is the claim whose value (a non-empty string) is the user
	// id, and so the notebook. Default [DefaultUserClaim].
	UserClaim string
	// Scopes, when set, must all be granted to a token (its "scope" claim,
	// space-separated, or "scp" list); a token without them gets 403. They
	// are listed in the metadata's scopes_supported.
	Scopes []string
	// Leeway is the clock skew allowed on exp, nbf and iat. Default
	// [DefaultLeeway]; negative means none.
	Leeway time.Duration
	// JWKSMinRefresh bounds how often a token with an unknown key id
	// makes the verifier fetch the JWKS again (a key rotation is picked up
	// at the first token that uses the new key, and a flood of made-up key
	// ids costs the issuer at most one fetch per interval). Default
	// [DefaultJWKSMinRefresh]; negative means no bound.
	JWKSMinRefresh time.Duration
	// JWKSMaxAge is how long a fetched JWKS is used before it is fetched
	// again. Default [DefaultJWKSMaxAge].
	JWKSMaxAge time.Duration
	// HTTPClient fetches the metadata and the JWKS. Default a client with
	// a 10-second timeout.
	HTTPClient *http.Client
	// Now returns the current time (for tests). Default time.Now.
	Now func() time.Time
}

// ErrOAuthConfig reports OAuthOptions that cannot work (a missing issuer
// or audience, an issuer whose metadata has no jwks_uri).
var ErrOAuthConfig = errors.New("mcp: OAuth configuration")

// ErrJWKS reports a JWKS that could not be fetched or parsed: the issuer
// is unreachable or publishes no usable key. A request that needed it
// fails with HTTP 500, never with access.
var ErrJWKS = errors.New("mcp: cannot get the issuer's signing keys (JWKS)")

// OAuthVerifier verifies JWT access tokens against an issuer's published
// keys (JWKS): the signature (RS256/384/512, PS256/384/512, ES256/384),
// iss, aud, exp (required) and nbf within the leeway, and takes the user
// id from [OAuthOptions.UserClaim]. Its [OAuthVerifier.Verify] is an
// auth.TokenVerifier. It is safe for concurrent use.
type OAuthVerifier struct {
	o       OAuthOptions
	jwksURL string
	parser  *jwt.Parser

	mu      sync.Mutex // held while fetching, so one fetch at a time
	keys    map[string]crypto.PublicKey
	algs    map[string]string // kid -> the JWK's "alg", when it has one
	fetched time.Time
}

// NewOAuthVerifier checks o, discovers the issuer's JWKS URL when
// o.JWKSURL is empty, and fetches the keys once, so a misconfiguration
// shows at start-up. It fails with [ErrOAuthConfig] or [ErrJWKS].
func NewOAuthVerifier(ctx context.Context, o OAuthOptions) (*OAuthVerifier, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: pass a context to NewOAuthVerifier, not nil: %w", ErrOAuthConfig, store.ErrNilArgument)
	}
	if o.Issuer == "" || o.Audience == "" {
		return nil, fmt.Errorf("%w: set both the issuer and the audience (this server's canonical URL)", ErrOAuthConfig)
	}
	if u, err := url.Parse(o.Audience); err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: the audience %q must be an absolute URL (this server's canonical URL, such as https://memory.example.com/mcp)", ErrOAuthConfig, o.Audience)
	}
	if o.UserClaim == "" {
		o.UserClaim = DefaultUserClaim
	}
	if o.Leeway == 0 {
		o.Leeway = DefaultLeeway
	}
	o.Leeway = max(o.Leeway, 0)
	if o.JWKSMinRefresh == 0 {
		o.JWKSMinRefresh = DefaultJWKSMinRefresh
	}
	if o.JWKSMaxAge <= 0 {
		o.JWKSMaxAge = DefaultJWKSMaxAge
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	v := &OAuthVerifier{o: o, jwksURL: o.JWKSURL}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(signingMethods),
		jwt.WithIssuer(o.Issuer),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(o.Leeway),
		jwt.WithTimeFunc(o.Now),
	)
	if v.jwksURL == "" {
		u, err := discoverJWKS(ctx, o.HTTPClient, o.Issuer)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.fetch(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// discoverJWKS reads the jwks_uri from the issuer's metadata (RFC 8414,
// then OpenID Connect discovery), checking that the metadata names the
// same issuer.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	base := strings.TrimSuffix(issuer, "/")
	var errs []error
	for _, doc := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		var meta oauthex.AuthServerMeta
		if err := getJSON(ctx, c, base+doc, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != base {
			return "", fmt.Errorf("%w: the metadata at %s names the issuer %q, not %q", ErrOAuthConfig, base+doc, meta.Issuer, issuer)
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("%w: the metadata at %s has no jwks_uri: give the JWKS URL", ErrOAuthConfig, base+doc)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("%w: cannot discover the issuer's JWKS URL (give it explicitly): %w", ErrOAuthConfig, errors.Join(errs...))
}

func getJSON(ctx context.Context, c *http.Client, u string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONDocument+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxJSONDocument {
		return fmt.Errorf("GET %s: the document exceeds %d bytes", u, maxJSONDocument)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// fetch replaces the keys with the JWKS's; v.mu is held. A JWKS with no
// usable key is an error, and the old keys stay.
func (v *OAuthVerifier) fetch(ctx context.Context) error {
	v.fetched = v.o.Now()
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, v.o.HTTPClient, v.jwksURL, &set); err != nil {
		return fmt.Errorf("%w: %w", ErrJWKS, err)
	}
	keys, algs := map[string]crypto.PublicKey{}, map[string]string{}
	for _, raw := range set.Keys {
		kid, alg, key, ok := parseJWK(raw)
		if ok {
			keys[kid], algs[kid] = key, alg
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: %s has no RSA or EC (P-256, P-384) signing key", ErrJWKS, v.jwksURL)
	}
	v.keys, v.algs = keys, algs
	return nil
}

// parseJWK returns one signing key of a JWKS; keys of other types or uses
// are skipped (ok false).
func parseJWK(raw json.RawMessage) (kid, alg string, key crypto.PublicKey, ok bool) {
	var k struct {
		Kty, Kid, Use, Alg, Crv string
		N, E, X, Y              string
	}
	if json.Unmarshal(raw, &k) != nil || (k.Use != "" && k.Use != "sig") {
		return "", "", nil, false
	}
	b64 := base64.RawURLEncoding.DecodeString
	switch k.Kty {
	case "RSA":
		n, err1 := b64(k.N)
		e, err2 := b64(k.E)
		if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
			return "", "", nil, false
		}
		exp := int(new(big.Int).SetBytes(e).Int64())
		if exp < 3 {
			return "", "", nil, false
		}
		return k.Kid, k.Alg, &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}, true
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return "", "", nil, false
		}
		x, err1 := b64(k.X)
		y, err2 := b64(k.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return "", "", nil, false
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", "", nil, false
		}
		return k.Kid, k.Alg, pub, true
	}
	return "", "", nil, false
}

// key returns the key for a token's kid and alg, fetching the JWKS again
// when the kid is unknown (a rotation) or the keys are older than
// JWKSMaxAge. A token without kid is accepted only when the JWKS has
// exactly one key.
func (v *OAuthVerifier) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.o.Now()
	find := func() (crypto.PublicKey, bool) {
		if kid == "" {
			if len(v.keys) != 1 {
				return nil, false
			}
			for k := range v.keys {
				kid = k
			}
		}
		key, ok := v.keys[kid]
		if ok && v.algs[kid] != "" && v.algs[kid] != alg {
			return nil, false // the key is for another algorithm
		}
		return key, ok
	}
	key, ok := find()
	stale := now.Sub(v.fetched) >= v.o.JWKSMaxAge
	if ok && !stale {
		return key, nil
	}
	if stale || v.o.JWKSMinRefresh < 0 || now.Sub(v.fetched) >= v.o.JWKSMinRefresh {
		if err := v.fetch(ctx); err != nil {
			if ok { // the old key still verifies until the issuer answers
				return key, nil
			}
			return nil, err
		}
		if key, ok = find(); ok {
			return key, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown signing key", auth.ErrInvalidToken)
}

// Verify is an auth.TokenVerifier: it checks a JWT access token and
// returns its user ([OAuthOptions.UserClaim]) as TokenInfo.UserID, its
// expiry and scopes. A token that is malformed, unsigned ("alg": "none"),
// badly signed, signed by an unknown key, for another audience or issuer,
// expired, not yet valid or without a user gets an error wrapping
// auth.ErrInvalidToken (HTTP 401); a JWKS that cannot be fetched,
// [ErrJWKS] (HTTP 500).
func (v *OAuthVerifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	var keyErr error
	tok, err := v.parser.Parse(token, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, err := v.key(ctx, kid, t.Method.Alg())
		keyErr = err
		return key, err
	})
	if err != nil {
		if keyErr != nil && errors.Is(keyErr, ErrJWKS) {
			return nil, keyErr
		}
		return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
	}
	claims, _ := tok.Claims.(jwt.MapClaims)
	aud, err := claims.GetAudience()
	if err != nil || !slices.ContainsFunc(aud, v.isAudience) {
		return nil, fmt.Errorf("%w: the token is not for this resource (aud)", auth.ErrInvalidToken)
	}
	user, _ := claims[v.o.UserClaim].(string)
	if user == "" {
		return nil, fmt.Errorf("%w: the token has no %q claim naming the user", auth.ErrInvalidToken, v.o.UserClaim)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, fmt.Errorf("%w: the token has no expiry", auth.ErrInvalidToken)
	}
	// The leeway applies here too: the bearer middleware checks expiry
	// strictly.
	return &auth.TokenInfo{UserID: user, Expiration: exp.Add(v.o.Leeway), Scopes: scopes(claims)}, nil
}

func (v *OAuthVerifier) isAudience(aud string) bool {
	return strings.TrimSuffix(aud, "/") == strings.TrimSuffix(v.o.Audience, "/")
}

// scopes returns the scopes of a token: the space-separated "scope" claim
// (RFC 9068), or the "scp" list some issuers use.
func scopes(c jwt.MapClaims) []string {
	if s, ok := c["scope"].(string); ok {
		return strings.Fields(s)
	}
	var out []string
	switch scp := c["scp"].(type) {
	case string:
		out = strings.Fields(scp)
	case []any:
		for _, s := range scp {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// Metadata returns the protected resource metadata document (RFC 9728)
// of this resource: its audience as "resource", the issuer as its
// authorization server, the scopes, bearer tokens in the header only.
func (v *OAuthVerifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.o.Audience,
		AuthorizationServers:   []string{v.o.Issuer},
		ScopesSupported:        slices.Clone(v.o.Scopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentmem memory",
	}
}

// MetadataURL returns where the metadata document is served: the
// well-known path inserted between the audience's host and its path (RFC
// 9728 §3.1), "https://host/.well-known/oauth-protected-resource/mcp"
// for "https://host/mcp". It is the resource_metadata of the
// WWW-Authenticate header of a 401.
func (v *OAuthVerifier) MetadataURL() string {
	u, _ := url.Parse(v.o.Audience) // checked by NewOAuthVerifier
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: metadataPath(u.Path)}).String()
}

// resourcePath is the path of the audience URL, "/" when it has none.
func (v *OAuthVerifier) resourcePath() string {
	u, _ := url.Parse(v.o.Audience) // checked by NewOAuthVerifier
	return cmp.Or(u.Path, "/")
}

func metadataPath(resourcePath string) string {
	return ProtectedResourceMetadataPath + strings.TrimSuffix(resourcePath, "/")
}

// MetadataPaths returns the paths [Server.Handler] serves the metadata
// document at: the path of [OAuthVerifier.MetadataURL] and, when it
// differs, the root well-known path that clients also try.
func (v *OAuthVerifier) MetadataPaths() []string {
	u, _ := url.Parse(v.MetadataURL())
	if u.Path == ProtectedResourceMetadataPath {
		return []string{u.Path}
	}
	return []string{u.Path, ProtectedResourceMetadataPath}
}
