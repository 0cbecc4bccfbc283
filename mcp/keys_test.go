package mcp_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agentmemmcp "github.com/agentmem/agentmem/mcp"
)

// TestKeyFileRoles: a line's optional third field is the key's role;
// lines without one (files written before roles) are user keys; any other
// role is refused with the line number.
func TestKeyFileRoles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	content := agentmemmcp.HashKey("key-ana") + " ana\n" +
		agentmemmcp.HashKey("key-root") + " root admin\n" +
		agentmemmcp.HashKey("key-bo") + " bo user\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := agentmemmcp.OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, user string
		admin     bool
	}{{"key-ana", "ana", false}, {"key-root", "root", true}, {"key-bo", "bo", false}} {
		info, err := keys.Verify(t.Context(), c.key, nil)
		if err != nil || info.UserID != c.user || agentmemmcp.IsAdmin(info) != c.admin {
			t.Errorf("%s: %+v, %v; want user %s, admin %v", c.key, info, err, c.user, c.admin)
		}
	}
	if agentmemmcp.IsAdmin(nil) {
		t.Error("IsAdmin(nil) is true")
	}
	for _, bad := range []string{" ana root\n", " ana Admin\n", " ana admin extra\n"} {
		if err := os.WriteFile(path, []byte(agentmemmcp.HashKey("k")+bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := agentmemmcp.OpenKeyFile(path); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("OpenKeyFile(%q): %v, want an error naming line 1", bad, err)
		}
	}
}

// TestHTTPAdminKeyIsOneUser: over MCP an admin key reaches its own
// notebook only, like any key.
func TestHTTPAdminKeyIsOneUser(t *testing.T) {
	mem := newMemory(t)
	path := filepath.Join(t.TempDir(), "keys")
	content := agentmemmcp.HashKey("key-alice") + " alice\n" + agentmemmcp.HashKey("key-root") + " root admin\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := agentmemmcp.OpenKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := newServer(t, mem, nil).Handler(&agentmemmcp.HTTPOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	alice, root := connectHTTP(t, hs, "alice"), connectHTTP(t, hs, "root")
	write(t, alice, "secret.md", "- alice's secret")
	if res := call(t, root, "read_memory", map[string]any{"file": "secret.md"}, nil); !res.IsError {
		t.Fatalf("an admin key read alice's file over MCP: %v", structured(t, res))
	}
	write(t, root, "MEMORY.md", "- root's own")
	if got := readAs(t, mem, "root", "MEMORY.md"); got != "- root's own\n" {
		t.Fatalf("root's MEMORY.md = %q", got)
	}
}
