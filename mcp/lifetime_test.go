package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// testClock is a settable store clock.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// clockedMemory is a notebook on a fresh memstore whose clock the test
// moves.
func clockedMemory(t *testing.T) (*memory.Memory, *testClock) {
	t.Helper()
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	mem, err := memory.New(store.New(newMemDriver(t), &store.Options{Now: c.now}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mem, c
}

func resourceURIs(t *testing.T, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return uris
}

// write_memory's expires argument reaches MCP clients as an optional,
// nullable string, and works through the server.
func TestWriteMemoryExpiresArgument(t *testing.T) {
	mem, _ := clockedMemory(t)
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcpsdk.Tool) bool { return tl.Name == "write_memory" })
	if i < 0 {
		t.Fatal("no write_memory")
	}
	b, _ := json.Marshal(tools.Tools[i].InputSchema)
	var schema struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	exp, ok := schema.Properties["expires"]
	if !ok || !reflect.DeepEqual(exp.Type, []any{"string", "null"}) || !strings.Contains(exp.Description, "never") ||
		slices.Contains(schema.Required, "expires") {
		t.Fatalf("write_memory schema %s: want an optional nullable expires", b)
	}
	res := call(t, cs, "write_memory", map[string]any{"content": "- in Bangkok", "file": "trip.md", "expires": "2h"}, nil)
	if w := structured(t, res); res.IsError {
		t.Fatalf("write_memory with expires: %v", w)
	}
	res = call(t, cs, "write_memory", map[string]any{"content": "- x", "file": "trip.md", "expires": "yesterday"}, nil)
	if e := structured(t, res); !res.IsError || !strings.Contains(e["error"].(string), "expires") {
		t.Fatalf("a bad expiry: %v, want a tool error", e)
	}
}

// An expired file leaves the MCP resources at once, through the store:
// resources/list no longer names it, resources/read says it is not found,
// and the snapshot resource no longer lists it.
func TestResourcesHideExpiredFiles(t *testing.T) {
	mem, c := clockedMemory(t)
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	write(t, cs, "MEMORY.md", "- likes tea")
	res := call(t, cs, "write_memory", map[string]any{"content": "- in Bangkok", "file": "trip.md", "expires": "1h"}, nil)
	if w := structured(t, res); res.IsError {
		t.Fatalf("write_memory: %v", w)
	}
	want := []string{agentmemmcp.SnapshotURI, "memory:///MEMORY.md", "memory:///trip.md"}
	if got := resourceURIs(t, cs); !reflect.DeepEqual(got, want) {
		t.Fatalf("resources = %v, want %v", got, want)
	}
	// The listing says which files expire (and which are pinned).
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := list.Resources[2].Description; !strings.HasPrefix(d, "Expires ") || list.Resources[1].Description != "" {
		t.Fatalf("descriptions %q, %q", list.Resources[1].Description, d)
	}
	path := readPath(t, mem, "u", "keep.md")
	if _, err := mem.Store().Write(t.Context(), store.WriteRequest{Path: path, Content: "- kept\n", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	if list, err = cs.ListResources(t.Context(), nil); err != nil || list.Resources[2].URI != "memory:///keep.md" ||
		list.Resources[2].Description != "Pinned." {
		t.Fatalf("pinned resource: %+v, %v", list.Resources, err)
	}
	if _, err := mem.Store().Delete(t.Context(), store.DeleteRequest{Path: path, Expected: mustVersion(t, mem.Store(), path)}); err != nil {
		t.Fatal(err)
	}
	if rr, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "memory:///trip.md"}); err != nil || rr.Contents[0].Text != "- in Bangkok\n" {
		t.Fatalf("trip.md before expiry: %+v, %v", rr, err)
	}

	c.add(2 * time.Hour)
	if got := resourceURIs(t, cs); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("resources after expiry = %v, want %v", got, want[:2])
	}
	_, err = cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "memory:///trip.md"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != mcpsdk.CodeResourceNotFound {
		t.Fatalf("read of an expired file: %v, want resource not found", err)
	}
	rr, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: agentmemmcp.SnapshotURI})
	if err != nil || strings.Contains(rr.Contents[0].Text, "trip.md") || !strings.Contains(rr.Contents[0].Text, "- likes tea") {
		t.Fatalf("snapshot after expiry: %+v, %v", rr, err)
	}
}

// A subscriber to a file hears its expiry: the poller reads it through
// the store, which no longer shows it.
func TestSubscriberHearsExpiry(t *testing.T) {
	mem, c := clockedMemory(t)
	notes := make(chan string, 16)
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u"), PollInterval: 20 * time.Millisecond}),
		&mcpsdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
			notes <- req.Params.URI
		}})
	res := call(t, cs, "write_memory", map[string]any{"content": "- in Bangkok", "file": "trip.md", "expires": "1h"}, nil)
	if w := structured(t, res); res.IsError {
		t.Fatalf("write_memory: %v", w)
	}
	if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///trip.md"}); err != nil {
		t.Fatal(err)
	}
	noNote(t, notes, 200*time.Millisecond)
	c.add(2 * time.Hour)
	if uri := nextNote(t, notes, 5*time.Second); uri != "memory:///trip.md" {
		t.Fatalf("notification for %s", uri)
	}
}

func mustVersion(t *testing.T, s *store.Store, path string) string {
	t.Helper()
	f, err := s.Read(t.Context(), path, 1)
	if err != nil {
		t.Fatal(err)
	}
	return f.Version
}
