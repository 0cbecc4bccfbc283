package mcp_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// TestNilArguments checks that each constructor refuses a nil or empty
// argument with its sentinel, which wraps store.ErrNilArgument.
func TestNilArguments(t *testing.T) {
	_, err := agentmemmcp.NewServer(nil, nil)
	if !errors.Is(err, agentmemmcp.ErrNilMemory) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewServer(nil): %v", err)
	}
	_, err = agentmemmcp.OpenKeyFile("")
	if !errors.Is(err, agentmemmcp.ErrKeyFile) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf(`OpenKeyFile(""): %v`, err)
	}
	_, err = agentmemmcp.NewOAuthVerifier(nil, agentmemmcp.OAuthOptions{Issuer: "https://issuer.example", Audience: "https://memory.example/mcp"})
	if !errors.Is(err, agentmemmcp.ErrOAuthConfig) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("NewOAuthVerifier(nil ctx): %v", err)
	}
	var mux *http.ServeMux
	srv := newServer(t, newMemory(t), nil)
	if err := srv.Mount(mux, nil); !errors.Is(err, agentmemmcp.ErrHTTPOptions) || !errors.Is(err, store.ErrNilArgument) {
		t.Errorf("Mount(nil mux): %v", err)
	}
}

// TestErrorPrefix checks that the package's sentinels start with "mcp: ".
func TestErrorPrefix(t *testing.T) {
	for _, err := range []error{agentmemmcp.ErrNilMemory, agentmemmcp.ErrOwnNamespace, agentmemmcp.ErrHTTPOptions,
		agentmemmcp.ErrKeyFile, agentmemmcp.ErrOAuthConfig, agentmemmcp.ErrJWKS, agentmemmcp.ErrShutdown, agentmemmcp.ErrToolResult} {
		if !strings.HasPrefix(err.Error(), "mcp: ") {
			t.Errorf("%q does not start with \"mcp: \"", err)
		}
	}
}
