package mcp_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

func TestHTTPUsersNeverSeeEachOthersFiles(t *testing.T) {
	mem := newMemory(t)
	hs := serveHTTP(t, newServer(t, mem, nil), "alice", "bob")
	alice, bob := connectHTTP(t, hs, "alice"), connectHTTP(t, hs, "bob")
	write(t, alice, "secret.md", "- alice's secret")
	write(t, alice, "MEMORY.md", "- alice")
	if res := call(t, bob, "read_memory", map[string]any{"file": "secret.md"}, nil); !res.IsError {
		t.Fatalf("bob read alice's file: %v", structured(t, res))
	}
	res := call(t, bob, "search_memory", map[string]any{"query": "secret alice"}, nil)
	if m := structured(t, res); len(m["matches"].([]any)) != 0 {
		t.Fatalf("bob's search found %v", m["matches"])
	}
	list, err := bob.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != agentmemmcp.SnapshotURI {
		t.Fatalf("bob's resources = %v, want only the snapshot", list.Resources)
	}
	if _, err := bob.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: "memory:///secret.md"}); err == nil {
		t.Fatal("bob read memory:///secret.md")
	}
	snap, err := bob.ReadResource(t.Context(), &mcpsdk.ReadResourceParams{URI: agentmemmcp.SnapshotURI})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.Contents[0].Text, "alice") || strings.Contains(snap.Contents[0].Text, "secret") {
		t.Fatalf("bob's snapshot shows alice's notebook: %q", snap.Contents[0].Text)
	}
	if got := readAs(t, mem, "alice", "secret.md"); got != "- alice's secret\n" {
		t.Fatalf("alice's file = %q", got)
	}
}

func TestHTTPRefusesBadTokensBigBodiesAndSessionTheft(t *testing.T) {
	hs := serveHTTP(t, newServer(t, newMemory(t), nil), "alice", "bob")
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	for _, token := range []string{"", "key-mallory", "key-alice " + "x", agentmemmcp.HashKey("key-alice")} {
		if code, _, _ := post(t, hs.URL, token, "", init); code != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", token, code)
		}
	}
	session := rawSession(t, hs.URL, "key-alice")
	defer deleteSession(t, hs.URL, "key-alice", session)
	big := writeCall(1, strings.Repeat("x", agentmemmcp.DefaultMaxBodyBytes))
	if code, _, _ := post(t, hs.URL, "key-alice", session, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d, want 413", code)
	}
	if code, _, _ := post(t, hs.URL, "key-bob", session, writeCall(2, "- bob was here")); code != http.StatusForbidden {
		t.Errorf("alice's session with bob's key: status %d, want 403", code)
	}
	code, _, msg := post(t, hs.URL, "key-alice", session, writeCall(3, "- alice"))
	if code != http.StatusOK || msg["result"] == nil {
		t.Fatalf("alice's own write: status %d, %v", code, msg)
	}
}

func TestHTTPResentRequestIDAppliedOnce(t *testing.T) {
	mem := newMemory(t)
	hs := serveHTTP(t, newServer(t, mem, nil), "alice")
	s1 := rawSession(t, hs.URL, "key-alice")
	defer deleteSession(t, hs.URL, "key-alice", s1)
	s2 := rawSession(t, hs.URL, "key-alice")
	defer deleteSession(t, hs.URL, "key-alice", s2)
	var replayed []any
	for _, session := range []string{s1, s1, s2} {
		code, _, msg := post(t, hs.URL, "key-alice", session, writeCall(5, "- line"))
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		replayed = append(replayed, msg["result"].(map[string]any)["structuredContent"].(map[string]any)["replayed"])
	}
	if fmt.Sprint(replayed) != "[false true false]" {
		t.Fatalf("replayed = %v, want [false true false] (id 5 in session 1 twice, then in session 2)", replayed)
	}
	if got := readAs(t, mem, "alice", "MEMORY.md"); got != "- line\n- line\n" {
		t.Fatalf("MEMORY.md = %q, want one line per session", got)
	}
}

func TestIdempotencyKeyAppliedOnceAcrossSessions(t *testing.T) {
	mem := newMemory(t)
	hs := serveHTTP(t, newServer(t, mem, nil), "alice")
	key := mcpsdk.Meta{agentmemmcp.MetaIdempotencyKey: "job-42/step-1"}
	args := map[string]any{"content": "- booked the flight", "file": nil, "old_text": nil}
	var replayed []any
	for range 3 {
		cs := connectHTTP(t, hs, "alice")
		m := structured(t, call(t, cs, "write_memory", args, key))
		replayed = append(replayed, m["replayed"])
		cs.Close()
	}
	if fmt.Sprint(replayed) != "[false true true]" {
		t.Fatalf("replayed = %v, want [false true true]", replayed)
	}
	cs := connectHTTP(t, hs, "alice")
	res := call(t, cs, "write_memory", map[string]any{"content": "- something else"}, key)
	if m := structured(t, res); !res.IsError || !strings.Contains(m["error"].(string), "different arguments") {
		t.Fatalf("the key reused with other arguments gave %v, want a tool error", m)
	}
	if got := readAs(t, mem, "alice", "MEMORY.md"); got != "- booked the flight\n" {
		t.Fatalf("MEMORY.md = %q", got)
	}
}

func TestHTTPConcurrentSessionsEveryLineOnce(t *testing.T) {
	const own, shared, lines = 50, 8, 20
	users := []string{"shared"}
	for i := range own {
		users = append(users, fmt.Sprintf("user-%d", i))
	}
	mem := newMemory(t)
	hs := serveHTTP(t, newServer(t, mem, nil), users...)
	type job struct{ user, tag string }
	var jobs []job
	for i := range own {
		jobs = append(jobs, job{fmt.Sprintf("user-%d", i), fmt.Sprintf("own-%d", i)})
	}
	for i := range shared {
		jobs = append(jobs, job{"shared", fmt.Sprintf("shared-%d", i)})
	}
	sessions := make([]*mcpsdk.ClientSession, len(jobs))
	for i, j := range jobs {
		sessions[i] = connectHTTP(t, hs, j.user)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs)*lines)
	for i, j := range jobs {
		wg.Go(func() {
			for n := range lines {
				res, err := sessions[i].CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write_memory",
					Arguments: map[string]any{"content": fmt.Sprintf("- %s line %d", j.tag, n)}})
				switch {
				case err != nil:
					errs <- err
				case res.IsError:
					errs <- fmt.Errorf("%s line %d: %v", j.tag, n, res.Content)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := func(user string) map[string]int {
		seen := map[string]int{}
		for _, line := range strings.Split(strings.TrimSuffix(readAs(t, mem, user, "MEMORY.md"), "\n"), "\n") {
			seen[line]++
		}
		return seen
	}
	sharedLines := count("shared")
	for _, j := range jobs {
		seen := sharedLines
		if j.user != "shared" {
			seen = count(j.user)
			if len(seen) != lines {
				t.Errorf("%s has %d distinct lines, want %d", j.user, len(seen), lines)
			}
		}
		for n := range lines {
			if c := seen[fmt.Sprintf("- %s line %d", j.tag, n)]; c != 1 {
				t.Errorf("%s line %d appears %d times", j.tag, n, c)
			}
		}
	}
	if len(sharedLines) != shared*lines {
		t.Errorf("shared MEMORY.md has %d distinct lines, want %d", len(sharedLines), shared*lines)
	}
}

func TestKeyFileReloadsAndFailsClosed(t *testing.T) {
	path := keyFile(t, "alice")
	keys, err := agentmemmcp.OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(key string) (string, error) {
		ti, err := keys.Verify(t.Context(), key, nil)
		if err != nil {
			return "", err
		}
		return ti.UserID, nil
	}
	if u, err := verify("key-alice"); err != nil || u != "alice" {
		t.Fatalf("alice's key: %q, %v", u, err)
	}
	if _, err := verify("key-bob"); err == nil {
		t.Fatal("bob's key accepted before it was added")
	}
	replace := func(content string) {
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(agentmemmcp.HashKey("key-bob") + " bob\n")
	if u, err := verify("key-bob"); err != nil || u != "bob" {
		t.Fatalf("bob's key after reload: %q, %v", u, err)
	}
	if _, err := verify("key-alice"); err == nil {
		t.Fatal("alice's revoked key still accepted")
	}
	replace("sha256:nothex bob\n")
	if _, err := verify("key-bob"); err == nil {
		t.Fatal("a malformed key file still accepts keys")
	}
	for _, bad := range []string{"sha256:abc bob\n", "bob\n", agentmemmcp.HashKey("k") + " a\n" + agentmemmcp.HashKey("k") + " b\n", agentmemmcp.HashKey("k") + " a b\n"} {
		replace(bad)
		if _, err := agentmemmcp.OpenKeyFile(path); err == nil {
			t.Errorf("OpenKeyFile accepted %q", bad)
		} else if strings.Contains(err.Error(), strings.Fields(bad)[0]) {
			t.Errorf("error %q repeats the file's content", err)
		}
	}
}

func TestHandlerNeedsOneVerifier(t *testing.T) {
	srv := newServer(t, newMemory(t), nil)
	if _, err := srv.Handler(nil); err == nil {
		t.Fatal("Handler(nil) succeeded")
	}
}
