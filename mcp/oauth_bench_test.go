package mcp_test

import (
	"testing"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/mcp/oauthtest"
)

// BenchmarkOAuthVerify measures the verification of one JWT access token
// with a cached JWKS (signature, claims, user), per algorithm.
func BenchmarkOAuthVerify(b *testing.B) {
	is, err := oauthtest.NewIssuer()
	if err != nil {
		b.Fatal(err)
	}
	defer is.Close()
	v, err := agentmemmcp.NewOAuthVerifier(b.Context(), agentmemmcp.OAuthOptions{Issuer: is.URL(), Audience: audience})
	if err != nil {
		b.Fatal(err)
	}
	for _, alg := range []string{"RS256", "ES256"} {
		b.Run(alg, func(b *testing.B) {
			tok, err := is.Token(alg, is.Claims("ana", audience))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(b.Context(), tok, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
