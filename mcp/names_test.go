package mcp_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// write_memory file=MEMORY.MD reaches MEMORY.md, never a second notebook,
// and a case variant of an existing file is refused naming it (the
// notebook's rule, here through MCP).
func TestFileNameCaseOverMCP(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	write(t, cs, "MEMORY.md", "- one")
	if m := write(t, cs, "MEMORY.MD", "- two"); m["file"] != "MEMORY.md" || m["status"] != "appended" {
		t.Fatalf("MEMORY.MD: %v, want an append to MEMORY.md", m)
	}
	write(t, cs, "travel.md", "- Hanoi")
	res := call(t, cs, "write_memory", map[string]any{"content": "- x", "file": "Travel.md", "old_text": nil}, nil)
	if m := structured(t, res); !res.IsError || !strings.Contains(m["error"].(string), `"travel.md"`) {
		t.Fatalf("Travel.md beside travel.md: %v, want an error naming travel.md", m)
	}
	paths, err := s.ListPaths(t.Context(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u/main/MEMORY.md", "u/main/travel.md"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("store holds %v, want %v", paths, want)
	}
}

// Every resource URI has one form, memory:///<name>, and the snapshot
// answers reads and subscriptions under it.
func TestResourceURIsOneForm(t *testing.T) {
	if !strings.HasPrefix(agentmemmcp.SnapshotURI, agentmemmcp.FileURIPrefix) {
		t.Fatalf("SnapshotURI %q is not of the form %s<name>", agentmemmcp.SnapshotURI, agentmemmcp.FileURIPrefix)
	}
	notes := make(chan string, 16)
	srv := newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")})
	cs := connectAs(t, srv, "test", "2025-11-25", &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
			notes <- req.Params.URI
		},
	})
	write(t, cs, "MEMORY.md", "- likes tea")
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if !strings.HasPrefix(r.URI, agentmemmcp.FileURIPrefix) {
			t.Errorf("listed %q, not of the form %s<name>", r.URI, agentmemmcp.FileURIPrefix)
		}
	}
	uri := agentmemmcp.SnapshotURI
	rr, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].URI != uri || !strings.Contains(rr.Contents[0].Text, "- likes tea") {
		t.Fatalf("read %s: %+v", uri, rr.Contents)
	}
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	write(t, cs, "MEMORY.md", "- likes green tea")
	if got := <-notes; got != uri {
		t.Fatalf("notified %q, want %q", got, uri)
	}
}

// Every write and delete through MCP records who made it: the user the
// request resolved to and the client's name from its initialize request.
func TestWritesRecordUserAndClient(t *testing.T) {
	s := store.New(newMemDriver(t), &store.Options{History: &store.HistoryOptions{}})
	mem, err := memory.New(s, &memory.Options{WriteMetadata: map[string]string{memory.UpdatedByKey: "agent", "app": "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	// stdio-like: one fixed user.
	cs := connectAs(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal@example.com")}), "claude-code", "", nil)
	write(t, cs, "notes.md", "- x")
	path := memory.EscapeNamespace("kamal@example.com") + "/main/notes.md"
	f, err := s.Read(t.Context(), path, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{memory.UpdatedByKey: "kamal@example.com", memory.ClientKey: "claude-code", "app": "demo"}
	if !reflect.DeepEqual(f.Metadata, want) {
		t.Fatalf("metadata %v, want %v", f.Metadata, want)
	}
	if res := call(t, cs, "delete_memory", map[string]any{"file": "notes.md"}, nil); res.IsError {
		t.Fatalf("delete: %v", structured(t, res))
	}
	page, err := s.History(t.Context(), store.HistoryRequest{Path: path, Limit: 1})
	if err != nil || len(page.Entries) != 1 || !page.Entries[0].Deleted || !reflect.DeepEqual(page.Entries[0].Metadata, want) {
		t.Fatalf("delete's history %+v, %v; want metadata %v", page, err, want)
	}

	// HTTP: the API key's user; a client name with control characters
	// and of any length is recorded clean and bounded.
	hs := serveHTTP(t, newServer(t, mem, nil), "alice")
	long := "cli\x00ent" + strings.Repeat("é", 2*agentmemmcp.MaxWhoChars)
	tr := &mcpsdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"key-alice"}}, MaxRetries: -1}
	hc, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: long, Version: "v0"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	write(t, hc, "MEMORY.md", "- y")
	f, err = s.Read(t.Context(), "alice/main/MEMORY.md", 10)
	if err != nil {
		t.Fatal(err)
	}
	client := f.Metadata[memory.ClientKey]
	if f.Metadata[memory.UpdatedByKey] != "alice" || !strings.HasPrefix(client, "client") || len([]rune(client)) != agentmemmcp.MaxWhoChars {
		t.Fatalf("HTTP write's metadata %q", f.Metadata)
	}
}
