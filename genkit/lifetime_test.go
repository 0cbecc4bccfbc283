package genkit_test

import (
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/genkit/genkittest"
)

// write_memory's expires argument reaches the notebook through the
// Genkit tool (its input schema validation included), and a later write
// without it keeps the file's expiry.
func TestWriteExpires(t *testing.T) {
	r := newRig(t, nil, nil, map[string][]genkittest.Step{
		"I'm in Bangkok this week.": {
			genkittest.Call("c1", memory.WriteTool, map[string]any{"content": "- in Bangkok", "file": "trip.md", "old_text": nil, "expires": "7d"}),
			genkittest.Call("c2", memory.WriteTool, map[string]any{"content": "- hotel by the river", "file": "trip.md", "old_text": nil}),
			genkittest.Answer("Noted."),
		},
	})
	before := time.Now()
	if _, err := r.generate(memory.WithUserID(t.Context(), "kamal"), ai.NewUserTextMessage("I'm in Bangkok this week.")); err != nil {
		t.Fatal(err)
	}
	f, err := r.store.Read(t.Context(), "kamal/main/trip.md", 100)
	if err != nil || f.Content != "- in Bangkok\n- hotel by the river\n" {
		t.Fatalf("trip.md = %+v, %v", f, err)
	}
	if d := f.ExpiresAt.Sub(before); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute {
		t.Fatalf("trip.md expires %s, want in 7 days", f.ExpiresAt)
	}
}
