package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/memstore"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
	"github.com/agentmem/agentmem/mcp/oauthtest"
)

// A stdio server serves one user; here a client talks to it over in-memory
// transports, as a test would.
func Example() {
	ctx := context.Background()
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mem, _ := memory.New(store.New(d, nil), nil)
	srv, _ := agentmemmcp.NewServer(mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal")})

	clientT, serverT := mcpsdk.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, serverT, nil) // in a real program: srv.Run(ctx, &mcpsdk.StdioTransport{})
	defer ss.Close()
	cs, _ := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	defer cs.Close()

	for t := range cs.Tools(ctx, nil) {
		fmt.Println(t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "write_memory",
		Arguments: map[string]any{"content": "- moved to Hanoi", "file": nil, "old_text": nil}})
	var w memory.WriteResult
	_ = json.Unmarshal([]byte(res.Content[0].(*mcpsdk.TextContent).Text), &w)
	fmt.Println(w.File, w.Status, w.Replayed)

	file, _ := cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "memory:///MEMORY.md"})
	fmt.Printf("%q\n", file.Contents[0].Text)
	// Output:
	// delete_memory
	// read_memory
	// search_memory
	// write_memory
	// MEMORY.md created false
	// "- moved to Hanoi\n"
}

// An HTTP server that is an OAuth 2.1 resource server: it accepts the
// issuer's JWT access tokens for its canonical URL. oauthtest stands in
// for the authorization server.
func ExampleNewOAuthVerifier() {
	ctx := context.Background()
	issuer, _ := oauthtest.NewIssuer()
	defer issuer.Close()

	v, err := agentmemmcp.NewOAuthVerifier(ctx, agentmemmcp.OAuthOptions{
		Issuer:   issuer.URL(),                     // the JWKS URL is discovered from its metadata
		Audience: "https://memory.example.com/mcp", // this server's canonical URL
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := memstore.New(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	mem, _ := memory.New(store.New(d, nil), nil)
	srv, _ := agentmemmcp.NewServer(mem, nil)
	h, _ := srv.Handler(&agentmemmcp.HTTPOptions{OAuth: v}) // serve h at the host's root
	_ = h

	token, _ := issuer.Token("ES256", issuer.Claims("kamal", "https://memory.example.com/mcp"))
	info, err := v.Verify(ctx, token, nil)
	fmt.Println(info.UserID, err)
	other, _ := issuer.Token("RS256", issuer.Claims("kamal", "https://other.example.com/mcp"))
	_, err = v.Verify(ctx, other, nil)
	fmt.Println(errors.Is(err, auth.ErrInvalidToken))
	fmt.Println(v.MetadataURL())
	// Output:
	// kamal <nil>
	// true
	// https://memory.example.com/.well-known/oauth-protected-resource/mcp
}
