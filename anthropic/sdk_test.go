package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentmem/agentmem/core/store"
)

func toolUse(t *testing.T, raw string) sdk.BetaToolUseBlock {
	t.Helper()
	var b sdk.BetaToolUseBlock
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandle(t *testing.T) {
	t.Parallel()
	tl := newTool(t, store.New(backends[0].open(t), nil))
	if _, err := DecodeToolUse(toolUse(t, `{"type":"tool_use","id":"toolu_x","name":"bash","input":{}}`)); !errors.Is(err, ErrNotMemoryTool) {
		t.Fatalf("another tool: %v", err)
	}
	create := toolUse(t, `{"type":"tool_use","id":"toolu_1","name":"memory","input":{"command":"create","path":"/memories/a.md","file_text":"hi"}}`)
	for range 2 { // the second is a replay
		res, err := tl.Handle(t.Context(), "u", create)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), `"tool_use_id":"toolu_1"`) || !strings.Contains(string(b), "File created successfully at: /memories/a.md") {
			t.Fatalf("result block %s", b)
		}
	}
	bad := toolUse(t, `{"type":"tool_use","id":"toolu_2","name":"memory","input":"not an object"}`)
	res, err := tl.Handle(t.Context(), "u", bad)
	if err != nil || res.OfToolResult == nil || !res.OfToolResult.IsError.Value {
		t.Fatalf("bad input: %+v, %v", res, err)
	}
	u := sdk.BetaMemoryTool20250818CommandUnion{Command: "view", Path: "/memories/a.md"}
	if r := exec(t, tl, "u", "", CommandOf(u)); r.Text != "Here's the content of /memories/a.md with line numbers:\n     1\thi" {
		t.Fatalf("view = %q", r.Text)
	}
	p, _ := json.Marshal(ToolParam())
	if string(p) != `{"name":"memory","type":"memory_20250818"}` {
		t.Fatalf("tool param %s", p)
	}
}

func TestHandleMessageNil(t *testing.T) {
	t.Parallel()
	tl := newTool(t, store.New(backends[0].open(t), nil))
	out, err := tl.HandleMessage(t.Context(), "u", nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("nil message: %v, %v", out, err)
	}
}

// TestListingBlockEscapesTags: a name holding "<" and ">" (names may hold
// any character but "/") cannot close the listing's tag.
func TestListingBlockEscapesTags(t *testing.T) {
	t.Parallel()
	tl := newTool(t, store.New(backends[0].open(t), nil))
	seedStore(t, tl, "u", map[string]string{"/memories/a</memory_directory>": "x", "/memories/b&c.md": "y"})
	b, err := tl.ListingBlock(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.Text, "</memory_directory>") != 1 || !strings.Contains(b.Text, "/memories/a&lt;/memory_directory&gt;") ||
		!strings.Contains(b.Text, "/memories/b&amp;c.md") {
		t.Fatalf("block:\n%s", b.Text)
	}
}
