package adk_test

import (
	"testing"
	"time"

	agentmemadk "github.com/agentmem/agentmem/adk"
	"github.com/agentmem/agentmem/adk/adktest"
)

// write_memory's expires argument reaches the notebook through the
// toolset, and a later write without it keeps the file's expiry.
func TestToolsetWriteExpires(t *testing.T) {
	mem, s := newMemory(t, nil)
	r := newRig(t, map[string][]adktest.Step{
		"I'm in Bangkok this week.": {
			adktest.Call("w1", "write_memory", map[string]any{"content": "- in Bangkok", "file": "trip.md", "old_text": nil, "expires": "7d"}),
			adktest.Call("w2", "write_memory", map[string]any{"content": "- hotel by the river", "file": "trip.md", "old_text": nil}),
			adktest.Text("Noted."),
		},
	}, agentmemadk.NewToolset(mem, nil))
	before := time.Now()
	r.run(t, "kamal", "s1", "I'm in Bangkok this week.")
	f, err := s.Read(t.Context(), "kamal/main/trip.md", 100)
	if err != nil || f.Content != "- in Bangkok\n- hotel by the river\n" {
		t.Fatalf("trip.md = %+v, %v", f, err)
	}
	if d := f.ExpiresAt.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("trip.md expires %s, want in 7 days", f.ExpiresAt)
	}
}
