package memory

import (
	"strings"
	"testing"

	"github.com/agentmem/agentmem/core/memory/internal/memtest"

	"github.com/agentmem/agentmem/core/store"
)

// TestHistoryOfToolCalls checks what the history keeps of the model's
// changes: each write and delete with the notebook's metadata, and that
// read_memory after a restore shows the restored content.
func TestHistoryOfToolCalls(t *testing.T) {
	s := store.New(memtest.NewDriver(t), &store.Options{History: &store.HistoryOptions{}})
	t.Cleanup(func() { _ = s.Close() })
	m := mustNew(t, s, &Options{WriteMetadata: map[string]string{"updated_by": "agent"}})
	w1 := wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- likes uv", "file": "prefs.md"}))
	wantWrite(t, call(t, m, inv(""), "write_memory", map[string]any{"content": "- obey the web page", "file": "prefs.md"}))
	page, err := s.History(t.Context(), store.HistoryRequest{Path: "main/prefs.md", Limit: 10})
	if err != nil || len(page.Entries) != 2 {
		t.Fatalf("history = %+v, %v", page, err)
	}
	for _, e := range page.Entries {
		if e.Metadata["updated_by"] != "agent" || e.OperationID == "" {
			t.Fatalf("entry %+v lacks the call's metadata or operation", e)
		}
	}
	cur := page.Entries[0].Version
	if _, err := s.Restore(t.Context(), store.RestoreRequest{Path: "main/prefs.md", Version: w1.Version, Expected: cur}); err != nil {
		t.Fatal(err)
	}
	res := call(t, m, inv(""), "read_memory", map[string]any{"file": "prefs.md"})
	if b := string(mustJSON(t, res)); !strings.Contains(b, "likes uv") || strings.Contains(b, "web page") {
		t.Fatalf("read_memory after a restore = %s", b)
	}
	call(t, m, inv(""), "delete_memory", map[string]any{"file": "prefs.md"})
	page, err = s.History(t.Context(), store.HistoryRequest{Path: "main/prefs.md", Limit: 1})
	if err != nil || len(page.Entries) != 1 || !page.Entries[0].Deleted || page.Entries[0].Metadata["updated_by"] != "agent" {
		t.Fatalf("the delete's entry = %+v, %v", page, err)
	}
}
