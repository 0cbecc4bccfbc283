package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

func TestNewServerRefusesNilMemory(t *testing.T) {
	if _, err := agentmemmcp.NewServer(nil, nil); err == nil {
		t.Fatal("NewServer(nil) succeeded")
	}
}

func TestToolsHaveTheNotebookSchemas(t *testing.T) {
	mem := newMemory(t)
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal")}), nil)
	if got := cs.InitializeResult().Instructions; got != mem.Instructions() || got == "" {
		t.Errorf("instructions = %q, want the notebook's guidance", got)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	specs := mem.Tools()
	if len(res.Tools) != len(specs) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(specs))
	}
	byName := map[string]*mcpsdk.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, spec := range specs {
		tool := byName[spec.Name]
		if tool == nil {
			t.Fatalf("tool %s missing", spec.Name)
		}
		// The notebook's schema, but required lists only the arguments
		// that are not optional (typed [string, null] for strict mode).
		var want, got map[string]any
		b, _ := json.Marshal(spec.InputSchema)
		_ = json.Unmarshal(b, &want)
		want["required"] = map[string][]any{"write_memory": {"content"}, "read_memory": {"file"},
			"delete_memory": {"file"}, "search_memory": {"query"}}[spec.Name]
		b, _ = json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(b, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s schema = %s, want the notebook's with required %v", spec.Name, b, want["required"])
		}
		if tool.Description != spec.Description {
			t.Errorf("%s description differs", spec.Name)
		}
	}
	a := func(name string) *mcpsdk.ToolAnnotations { return byName[name].Annotations }
	if !a("read_memory").ReadOnlyHint || !a("search_memory").ReadOnlyHint {
		t.Error("read_memory and search_memory must be read-only")
	}
	if a("write_memory").ReadOnlyHint || a("write_memory").IdempotentHint || a("delete_memory").ReadOnlyHint {
		t.Error("write_memory must be neither read-only nor idempotent; delete_memory not read-only")
	}
	if d := a("delete_memory").DestructiveHint; d == nil || !*d {
		t.Error("delete_memory must be destructive")
	}
	for name := range byName {
		if o := a(name).OpenWorldHint; o == nil || *o {
			t.Errorf("%s: OpenWorldHint must be false", name)
		}
	}
}

func TestToolsWriteReadSearchDelete(t *testing.T) {
	cs := connect(t, newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("kamal@example.com")}), nil)
	w := write(t, cs, "travel", "- prefers window seats")
	if w["file"] != "travel.md" || w["status"] != "created" || w["replayed"] != false || w["version"] == "" {
		t.Fatalf("write result = %v", w)
	}
	if got := read(t, cs, "travel.md"); got != "- prefers window seats\n" {
		t.Fatalf("read = %q", got)
	}
	res := call(t, cs, "search_memory", map[string]any{"query": "window"}, nil)
	s := structured(t, res)
	matches, _ := s["matches"].([]any)
	if res.IsError || len(matches) != 1 || matches[0].(map[string]any)["file"] != "travel.md" {
		t.Fatalf("search = %v", s)
	}
	res = call(t, cs, "delete_memory", map[string]any{"file": "travel.md"}, nil)
	if d := structured(t, res); res.IsError || d["status"] != "deleted" {
		t.Fatalf("delete = %v", d)
	}
	res = call(t, cs, "read_memory", map[string]any{"file": "travel.md"}, nil)
	if e := structured(t, res); !res.IsError || e["error"] == "" {
		t.Fatalf("read of a deleted file = %v, want a tool error", e)
	}
}

// TestWriteMemoryOptionalArguments calls write_memory as a client that
// reads the advertised schema would: file null (the MCP Inspector's empty
// field) and old_text left out, since neither is required. Both mean
// absent: the text is appended to MEMORY.md, not to null.md.
func TestWriteMemoryOptionalArguments(t *testing.T) {
	cs := connect(t, newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "write_memory" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct{ Required []string }
		if err := json.Unmarshal(b, &schema); err != nil || !reflect.DeepEqual(schema.Required, []string{"content"}) {
			t.Errorf("write_memory requires %v, want only content: %s", schema.Required, b)
		}
	}
	for i, args := range []map[string]any{{"content": "- one", "file": nil}, {"content": "- two"}, {"content": "- three", "file": nil, "old_text": nil}} {
		res := call(t, cs, "write_memory", args, nil)
		w := structured(t, res)
		if res.IsError || w["file"] != memory.MainFile || w["status"] != map[bool]string{true: "created", false: "appended"}[i == 0] {
			t.Fatalf("write_memory(%v) = %v, want MEMORY.md", args, w)
		}
	}
	if got := read(t, cs, memory.MainFile); got != "- one\n- two\n- three\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
	if res := call(t, cs, "read_memory", map[string]any{"file": "null.md"}, nil); !res.IsError {
		t.Fatalf("null.md exists: %v", structured(t, res))
	}
}

func TestToolErrorForBadArguments(t *testing.T) {
	cs := connect(t, newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	for _, args := range []map[string]any{
		{"content": 5},
		{"content": "x", "unknown": "y"},
		{"file": "MEMORY.md"},
	} {
		res := call(t, cs, "write_memory", args, nil)
		if e := structured(t, res); !res.IsError || !strings.Contains(e["error"].(string), "Invalid arguments") {
			t.Errorf("write_memory(%v) = %v, want an Invalid arguments tool error", args, e)
		}
	}
	res := call(t, cs, "write_memory", map[string]any{"content": "x"}, mcpsdk.Meta{agentmemmcp.MetaIdempotencyKey: 7})
	if e := structured(t, res); !res.IsError || !strings.Contains(e["error"].(string), agentmemmcp.MetaIdempotencyKey) {
		t.Errorf("a numeric idempotency key gave %v, want a tool error", e)
	}
}

func TestFileNamesNeverLeaveTheNamespace(t *testing.T) {
	s := store.New(newMemDriver(t), nil)
	mem, err := memory.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("../alice")}), nil)
	for _, file := range []string{"../bob/main/MEMORY.md", "..", "a/b", "/etc/passwd", "%2e%2e%2fx", `..\x`, "", ".hidden"} {
		res := call(t, cs, "write_memory", map[string]any{"content": "x", "file": file, "old_text": nil}, nil)
		if !res.IsError {
			t.Errorf("write_memory to %q succeeded", file)
		}
	}
	write(t, cs, "MEMORY.md", "- mine")
	for _, uri := range []string{
		"memory:///../bob/main/MEMORY.md", "memory:///%2e%2e/MEMORY.md", "memory:///a/MEMORY.md",
		"memory://bob/MEMORY.md", "memory:///MEMORY.md?x=1", "memory:///..", "file:///etc/passwd",
		"memory:///%2E%2E%2Fbob%2Fmain%2FMEMORY.md", "memory:///MEMORY",
	} {
		if res, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s = %v, want an error", uri, res.Contents)
		}
	}
	paths, err := s.ListPaths(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.EscapeNamespace("../alice") + "/main/MEMORY.md"
	if len(paths) != 1 || paths[0] != want {
		t.Fatalf("store holds %v, want only %s", paths, want)
	}
}

func TestResourcesListAndRead(t *testing.T) {
	cs := connect(t, newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	write(t, cs, "MEMORY.md", "- likes tea")
	write(t, cs, "travel.md", "- Hanoi in May")
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	want := []string{agentmemmcp.SnapshotURI, "memory:///MEMORY.md", "memory:///travel.md"}
	if !reflect.DeepEqual(uris, want) {
		t.Fatalf("resources = %v, want %v", uris, want)
	}
	rr, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "memory:///travel.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "- Hanoi in May\n" {
		t.Fatalf("travel.md = %+v", rr.Contents)
	}
	rr, err = cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: agentmemmcp.SnapshotURI})
	if err != nil {
		t.Fatal(err)
	}
	if text := rr.Contents[0].Text; !strings.HasPrefix(text, memory.BlockOpen) || !strings.Contains(text, "- likes tea") || !strings.Contains(text, "travel.md") {
		t.Fatalf("snapshot = %q", text)
	}
	_, err = cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "memory:///absent.md"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != mcpsdk.CodeResourceNotFound {
		t.Fatalf("read of an absent file: %v, want resource not found", err)
	}
}

func TestPromptReturnsTheBlock(t *testing.T) {
	mem := newMemory(t)
	cs := connect(t, newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}), nil)
	write(t, cs, "MEMORY.md", "- likes tea")
	res, err := cs.GetPrompt(t.Context(), &mcpsdk.GetPromptParams{Name: agentmemmcp.PromptName})
	if err != nil {
		t.Fatal(err)
	}
	want, err := mem.Snapshot(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.(*mcpsdk.TextContent).Text != want {
		t.Fatalf("prompt = %+v, want one user message %q", res.Messages, want)
	}
}

func TestSubscribersHearOnlyTheirOwnChanges(t *testing.T) {
	srv := newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: sessionUser})
	type note struct{ user, uri string }
	notes := make(chan note, 16)
	// Resource subscriptions of the 2025-11-25 protocol (resources/subscribe).
	session := func(user string) *mcpsdk.ClientSession {
		return connectAs(t, srv, user, "2025-11-25", &mcpsdk.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
				if _, leaked := req.Params.Meta["agentmem/scope"]; leaked {
					t.Errorf("notification carries the internal scope tag: %v", req.Params.Meta)
				}
				notes <- note{user, req.Params.URI}
			},
		})
	}
	alice, bob := session("alice"), session("bob")
	for _, cs := range []*mcpsdk.ClientSession{alice, bob} {
		if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///MEMORY.md"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///../x.md"}); err == nil {
		t.Error("subscribing to an invalid file URI succeeded")
	}
	write(t, alice, "MEMORY.md", "- alice")
	if n := <-notes; n != (note{"alice", "memory:///MEMORY.md"}) {
		t.Fatalf("first notification %v, want alice's MEMORY.md", n)
	}
	// Bob's own write: had alice's change reached him, it would come first
	// (notifications are handled in order).
	write(t, bob, "MEMORY.md", "- bob")
	if n := <-notes; n != (note{"bob", "memory:///MEMORY.md"}) {
		t.Fatalf("notification %v, want bob's own MEMORY.md", n)
	}
	// A write to another file is no change of MEMORY.md.
	write(t, bob, "travel.md", "- bob")
	write(t, bob, "MEMORY.md", "- bob again")
	if n := <-notes; n != (note{"bob", "memory:///MEMORY.md"}) {
		t.Fatalf("notification %v, want bob's MEMORY.md", n)
	}
}

// TestSubscriptionDuringListingKept: a session that connects and
// subscribes while the server lists the live sessions (to forget ended
// sessions' subscriptions) is not in that listing; its subscription must
// survive, and it must hear the next change.
func TestSubscriptionDuringListingKept(t *testing.T) {
	srv := newServer(t, newMemory(t), &agentmemmcp.Options{Namespace: sessionUser})
	heard := make(chan string, 16)
	session := func(tag string) *mcpsdk.ClientSession {
		cs := connectAs(t, srv, "alice", "2025-11-25", &mcpsdk.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcpsdk.ResourceUpdatedNotificationRequest) {
				heard <- tag
			},
		})
		if err := cs.Subscribe(t.Context(), &mcpsdk.SubscribeParams{URI: "memory:///MEMORY.md"}); err != nil {
			t.Fatal(err)
		}
		return cs
	}
	first := session("first")
	var once sync.Once
	agentmemmcp.SetAfterListing(t, func() { once.Do(func() { session("late") }) })
	write(t, first, "MEMORY.md", "- one") // lists the sessions: "late" subscribes in the gap
	write(t, first, "MEMORY.md", "- two")
	// "first" hears both changes; "late" at least the second (the first
	// too, if its subscription was in place before the notification).
	got := map[string]int{}
	for got["first"] < 2 || got["late"] < 1 {
		select {
		case tag := <-heard:
			got[tag]++
		case <-time.After(5 * time.Second):
			t.Fatalf("heard %v: the late session's subscription was forgotten", got)
		}
	}
}

// sessionUser is a Namespace function for tests: the user is the client's
// name, a stand-in for an authenticated user on in-memory transports.
func sessionUser(_ context.Context, req mcpsdk.Request) (string, error) {
	ss, ok := req.GetSession().(*mcpsdk.ServerSession)
	if !ok || ss.InitializeParams() == nil || ss.InitializeParams().ClientInfo == nil {
		return "", errors.New("no client name")
	}
	return ss.InitializeParams().ClientInfo.Name, nil
}

// readAs reads a file of user's notebook straight from the notebook.
func readAs(t *testing.T, mem *memory.Memory, user, file string) string {
	t.Helper()
	res, err := mem.Call(t.Context(), memory.Invocation{Namespace: memory.EscapeNamespace(user)}, "read_memory",
		json.RawMessage(`{"file":"`+file+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	text, ok := res.(string)
	if !ok {
		t.Fatalf("read %s of %s: %v", file, user, res)
	}
	return text
}

func TestResentRequestIDAppliedOnce(t *testing.T) {
	mem := newMemory(t)
	srv := newServer(t, mem, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")})
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(raw string) {
		msg, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		msg, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := jsonrpc.EncodeMessage(msg)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var replayed []any
	for range 2 {
		send(string(writeCall(7, "- once")))
		m := recv()
		replayed = append(replayed, m["result"].(map[string]any)["structuredContent"].(map[string]any)["replayed"])
	}
	send(string(writeCall(8, "- once")))
	m := recv()
	replayed = append(replayed, m["result"].(map[string]any)["structuredContent"].(map[string]any)["replayed"])
	if !reflect.DeepEqual(replayed, []any{false, true, false}) {
		t.Fatalf("replayed = %v, want [false true false] (id 7, id 7 again, id 8)", replayed)
	}
	if text := readAs(t, mem, "u", "MEMORY.md"); text != "- once\n- once\n" {
		t.Fatalf("MEMORY.md = %q, want two lines (ids 7 and 8)", text)
	}
}

func TestRequestsFailWithoutAUserOrOnAMemoryWithItsOwnNamespace(t *testing.T) {
	own, err := memory.New(store.New(newMemDriver(t), nil), &memory.Options{Namespace: "everyone"})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		mem  *memory.Memory
		opts *agentmemmcp.Options
		want error
	}{
		"own namespace": {own, &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("u")}, agentmemmcp.ErrOwnNamespace},
		"no user":       {newMemory(t), nil, memory.ErrNoUser}, // stdio has no token
		"empty user":    {newMemory(t), &agentmemmcp.Options{Namespace: agentmemmcp.FixedUser("")}, memory.ErrNoUser},
	} {
		cs := connect(t, newServer(t, c.mem, c.opts), nil)
		_, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory", Arguments: map[string]any{"content": "x"}})
		if err == nil || !strings.Contains(err.Error(), c.want.Error()) {
			t.Errorf("%s: write_memory error %v, want %v", name, err, c.want)
		}
		if _, err := cs.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: agentmemmcp.SnapshotURI}); err == nil {
			t.Errorf("%s: reading the snapshot succeeded", name)
		}
	}
}
