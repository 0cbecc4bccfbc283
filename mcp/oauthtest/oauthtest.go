// Package oauthtest runs a minimal OAuth 2.1 authorization server for
// tests of an MCP resource server: issuer metadata (RFC 8414), a JWKS, and
// JWT access tokens signed with keys made when it starts (RS256 and
// ES256), which can be rotated. It issues tokens to whoever asks; never
// use it outside tests.
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is a running test authorization server.
type Issuer struct {
	srv *httptest.Server

	mu      sync.Mutex
	keys    []signingKey // published in the JWKS
	current map[string]int
	fetches int
}

type signingKey struct {
	kid string
	alg string
	key crypto.Signer
}

// NewIssuer starts an issuer on a loopback port with one RS256 key and one
// ES256 key. Close it when done.
func NewIssuer() (*Issuer, error) {
	is := &Issuer{current: map[string]int{}}
	for _, alg := range []string{"RS256", "ES256"} {
		if _, err := is.Rotate(alg); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", is.metadata)
	mux.HandleFunc("GET /jwks", is.jwks)
	is.srv = httptest.NewUnstartedServer(mux) // is.srv is set before a handler reads it
	is.srv.Start()
	return is, nil
}

// URL is the issuer identifier (iss) and base URL.
func (is *Issuer) URL() string { return is.srv.URL }

// JWKSURL is where the keys are published.
func (is *Issuer) JWKSURL() string { return is.srv.URL + "/jwks" }

// Fetches returns how many times the JWKS was fetched.
func (is *Issuer) Fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.fetches
}

// Close stops the issuer.
func (is *Issuer) Close() { is.srv.Close() }

// Rotate adds a new key for alg ("RS256" or "ES256") to the JWKS and signs
// the next tokens of alg with it; the old keys stay published. It returns
// the new key id.
func (is *Issuer) Rotate(alg string) (string, error) {
	key, err := newKey(alg)
	if err != nil {
		return "", err
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	kid := fmt.Sprintf("%s-%d", alg, len(is.keys)+1)
	is.keys = append(is.keys, signingKey{kid: kid, alg: alg, key: key})
	is.current[alg] = len(is.keys) - 1
	return kid, nil
}

func newKey(alg string) (crypto.Signer, error) {
	switch alg {
	case "RS256":
		return rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	return nil, fmt.Errorf("oauthtest: unsupported algorithm %q", alg)
}

// Claims returns valid claims for a token of user for audience, issued
// by is and expiring in an hour.
func (is *Issuer) Claims(user, audience string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss": is.URL(), "sub": user, "aud": audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

// Token signs claims with the current key of alg ("RS256" or "ES256").
func (is *Issuer) Token(alg string, claims jwt.MapClaims) (string, error) {
	is.mu.Lock()
	k := is.keys[is.current[alg]]
	is.mu.Unlock()
	return sign(k.alg, k.kid, k.key, claims)
}

// Forge signs claims with a fresh key that is not published, under the
// key id of the current key of alg: a token with a bad signature.
func (is *Issuer) Forge(alg string, claims jwt.MapClaims) (string, error) {
	key, err := newKey(alg)
	if err != nil {
		return "", err
	}
	is.mu.Lock()
	kid := is.keys[is.current[alg]].kid
	is.mu.Unlock()
	return sign(alg, kid, key, claims)
}

// Unpublished signs claims with a fresh key under a key id the JWKS does
// not have.
func (is *Issuer) Unpublished(alg string, claims jwt.MapClaims) (string, error) {
	key, err := newKey(alg)
	if err != nil {
		return "", err
	}
	return sign(alg, "unpublished-"+alg, key, claims)
}

func sign(alg, kid string, key crypto.Signer, claims jwt.MapClaims) (string, error) {
	t := jwt.NewWithClaims(jwt.GetSigningMethod(alg), claims)
	t.Header["kid"] = kid
	return t.SignedString(key)
}

func (is *Issuer) metadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                                is.URL(),
		"authorization_endpoint":                is.URL() + "/authorize",
		"token_endpoint":                        is.URL() + "/token",
		"jwks_uri":                              is.JWKSURL(),
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

func (is *Issuer) jwks(w http.ResponseWriter, _ *http.Request) {
	is.mu.Lock()
	is.fetches++
	keys := make([]map[string]string, 0, len(is.keys))
	for _, k := range is.keys {
		keys = append(keys, jwk(k))
	}
	is.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
}

func jwk(k signingKey) map[string]string {
	b64 := base64.RawURLEncoding.EncodeToString
	m := map[string]string{"kid": k.kid, "alg": k.alg, "use": "sig"}
	switch pub := k.key.Public().(type) {
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, _ := pub.Bytes() // 0x04 || X || Y
		size := (len(raw) - 1) / 2
		m["kty"], m["crv"], m["x"], m["y"] = "EC", "P-256", b64(raw[1:1+size]), b64(raw[1+size:])
	}
	return m
}
