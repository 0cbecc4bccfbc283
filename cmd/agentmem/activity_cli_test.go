package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/console"
)

// TestCLIActivityCountsCLI: the writes, the delete and the restore the CLI
// makes record the client cli, so the console's activity counts them
// under cli (not "none recorded"), each kind as the history has it; an
// explicit --meta client=… is kept.
func TestCLIActivityCountsCLI(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "memory.db") + "?history=on"
	run := func(stdin string, args ...string) string {
		t.Helper()
		a, out, errOut := testApp()
		a.stdin = strings.NewReader(stdin)
		if code := a.run(t.Context(), append([]string{"--store", url}, args...)); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return strings.TrimSpace(out.String())
	}
	v1 := run("- likes tea\n", "put", "--by", "kim", "kamal/main/MEMORY.md")
	run("", "append", "--by", "kim", "--operation-id", "t/1", "kamal/main/MEMORY.md", "--", "- lives in Hanoi")
	run("- a note\n", "put", "--by", "kim", "kamal/main/notes.md")
	run("", "rm", "--by", "kim", "kamal/main/notes.md")
	run("", "restore", "--by", "kim", "kamal/main/MEMORY.md", v1)
	run("x\n", "put", "--by", "bot", "--meta", "client=crm-sync", "kamal/main/sync.md")

	s := openURL(t, url)
	h, err := console.New(s, &console.Options{Authenticate: func(*http.Request) (console.Principal, error) {
		return console.Principal{User: "ops", Admin: true}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/namespaces/kamal/activity", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("activity: %d %s", w.Code, w.Body)
	}
	var act console.ActivityJSON
	if err := json.Unmarshal(w.Body.Bytes(), &act); err != nil {
		t.Fatal(err)
	}
	got := map[string]console.CountJSON{}
	for _, c := range act.Clients {
		got[c.Name] = c
	}
	cli := got[cliClient]
	if len(act.Clients) != 2 || cli.Writes != 3 || cli.Deletes != 1 || cli.Restores != 1 || cli.Changes != 5 || cli.LastPath != "main/MEMORY.md" {
		t.Fatalf("clients %+v; want cli with 3 writes, 1 delete, 1 restore (last main/MEMORY.md) and crm-sync", act.Clients)
	}
	if c := got["crm-sync"]; c.Writes != 1 || c.Changes != 1 {
		t.Fatalf("an explicit --meta client: %+v, want crm-sync's one write", act.Clients)
	}
}
