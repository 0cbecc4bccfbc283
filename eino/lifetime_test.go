package eino_test

import (
	"testing"
	"time"

	"github.com/cloudwego/eino/schema"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/eino/einotest"
)

// write_memory's expires argument reaches the notebook through the
// middleware's tool, and a later write without it keeps the file's
// expiry.
func TestWriteExpires(t *testing.T) {
	mem, s := newMemory(t, nil)
	llm := einotest.NewModel(map[string][]einotest.Step{
		"I'm in Bangkok this week.": {
			einotest.Call("c1", memory.WriteTool, map[string]any{"content": "- in Bangkok", "file": "trip.md", "old_text": nil, "expires": "7d"}),
			einotest.Call("c2", memory.WriteTool, map[string]any{"content": "- hotel by the river", "file": "trip.md", "old_text": nil}),
			einotest.Text("Noted."),
		},
	})
	r := newRunner(t, llm, mem, nil)
	before := time.Now()
	mustRun(t, memory.WithUserID(t.Context(), "kamal"), r, schema.UserMessage("I'm in Bangkok this week."))
	f, err := s.Read(t.Context(), "kamal/main/trip.md", 100)
	if err != nil || f.Content != "- in Bangkok\n- hotel by the river\n" {
		t.Fatalf("trip.md = %+v, %v", f, err)
	}
	if d := f.ExpiresAt.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("trip.md expires %s, want in 7 days", f.ExpiresAt)
	}
}
