package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentmem/agentmem/anthropic"
	"github.com/agentmem/agentmem/anthropic/anthropictest"
	"github.com/agentmem/agentmem/contract"
)

// TestAnthropicEndToEnd drives the official Anthropic SDK client against a
// scripted Messages API server whose model uses Claude's memory tool, on
// every backend in both of the suite's modes.
func TestAnthropicEndToEnd(t *testing.T) {
	for _, h := range harnesses() {
		contract.RunCases(t, h, contract.Case{Name: "anthropic_end_to_end", Run: anthropicEndToEnd})
	}
}

// TestAnthropicCommands runs the memory tool's table of every command and
// error string (anthropictest.Commands) on every backend.
func TestAnthropicCommands(t *testing.T) {
	for _, h := range harnesses() {
		t.Run(h.Name, func(t *testing.T) {
			if h.Parallel {
				t.Parallel()
			}
			anthropictest.Commands(t, h.NewDriver)
		})
	}
}

// toolUse is one memory tool_use block of a scripted turn.
type toolUse struct {
	id    string
	input map[string]any
}

// messagesServer is an httptest Messages API server: each response carries
// the next turn's tool_use blocks, then a final text. It records each
// tool_result it receives as "<tool_use_id> <is_error> <text>".
type messagesServer struct {
	t       *testing.T
	turns   [][]toolUse
	mu      sync.Mutex
	n       int
	results []string
}

func (m *messagesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var req struct {
		Tools    []struct{ Type, Name string } `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	err := json.NewDecoder(r.Body).Decode(&req)
	if err != nil || r.URL.Path != "/v1/messages" || !strings.Contains(r.Header.Get("anthropic-beta"), string(anthropic.Beta)) ||
		fmt.Sprint(req.Tools) != "[{memory_20250818 memory}]" {
		m.t.Errorf("request %s, beta %q, tools %v: %v", r.URL.Path, r.Header.Get("anthropic-beta"), req.Tools, err)
	}
	if m.n > 0 { // the last message answers the previous turn's tool_use blocks, in order
		last := req.Messages[len(req.Messages)-1]
		if last.Role != "user" || len(last.Content) != len(m.turns[m.n-1]) {
			m.t.Errorf("turn %d: last message %s with %d blocks", m.n, last.Role, len(last.Content))
		}
		for i, b := range last.Content {
			if b.Type != "tool_result" || i >= len(m.turns[m.n-1]) || b.ToolUseID != m.turns[m.n-1][i].id || len(b.Content) != 1 {
				m.t.Errorf("turn %d block %d: %+v", m.n, i, b)
				continue
			}
			m.results = append(m.results, fmt.Sprintf("%s %v %s", b.ToolUseID, b.IsError, b.Content[0].Text))
		}
	}
	content, stop := []map[string]any{{"type": "text", "text": "Noted."}}, "end_turn"
	if m.n < len(m.turns) {
		content, stop = nil, "tool_use"
		for _, u := range m.turns[m.n] {
			content = append(content, map[string]any{"type": "tool_use", "id": u.id, "name": "memory", "input": u.input})
		}
	}
	m.n++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", m.n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10},
	})
}

// anthropicEndToEnd: the model views, creates, edits, renames and deletes
// memory files through the SDK's tool loop; its last turn replays two
// earlier tool_use ids (an insert, and a create whose file was deleted
// since), which return their first results and change nothing.
func anthropicEndToEnd(t *testing.T, e *contract.Env) {
	type in = map[string]any
	insert := in{"command": "insert", "path": "/memories/user.md", "insert_line": 1, "insert_text": "lang: Go"}
	scratch := in{"command": "create", "path": "/memories/scratch.md", "file_text": "tmp"}
	model := &messagesServer{t: t, turns: [][]toolUse{
		{{"toolu_view", in{"command": "view", "path": "/memories"}}},
		{{"toolu_user", in{"command": "create", "path": "/memories/user.md", "file_text": "# User\nname: Kamal\ndrink: tea\n"}},
			{"toolu_project", in{"command": "create", "path": "/memories/projects/agentmem.md", "file_text": "status: draft\n"}}},
		{{"toolu_coffee", in{"command": "str_replace", "path": "/memories/user.md", "old_str": "drink: tea", "new_str": "drink: coffee"}},
			{"toolu_insert", insert}},
		{{"toolu_rename", in{"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/work"}},
			{"toolu_scratch", scratch}},
		{{"toolu_delete", in{"command": "delete", "path": "/memories/scratch.md"}},
			{"toolu_tail", in{"command": "view", "path": "/memories/user.md", "view_range": []int{2, -1}}},
			{"toolu_escape", in{"command": "view", "path": "/memories/../secrets"}}},
		{{"toolu_insert", insert}, {"toolu_scratch", scratch}}, // replays
	}}
	srv := httptest.NewServer(model)
	defer srv.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	tl, err := anthropic.New(e.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := sdk.BetaMessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		Tools: []sdk.BetaToolUnionParam{anthropic.ToolParam()}, Betas: []sdk.AnthropicBeta{anthropic.Beta},
		Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("Remember: I'm Kamal, I drink coffee."))},
	}
	for range len(model.turns) + 1 {
		msg, err := client.Beta.Messages.New(ctx(t), params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		if msg.StopReason != sdk.BetaStopReasonToolUse {
			break
		}
		results, err := tl.HandleMessage(ctx(t), "kamal@example.com", msg)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, sdk.NewBetaUserMessage(results...))
	}
	eq(t, "model requests", model.n, len(model.turns)+1)

	inserted, created := "toolu_insert false The file /memories/user.md has been edited.",
		"toolu_scratch false File created successfully at: /memories/scratch.md"
	eqSlice(t, "tool results", model.results, []string{
		"toolu_view false Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories",
		"toolu_user false File created successfully at: /memories/user.md",
		"toolu_project false File created successfully at: /memories/projects/agentmem.md",
		"toolu_coffee false The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
			"     1\t# User\n     2\tname: Kamal\n     3\tdrink: coffee\n     4\t",
		inserted,
		"toolu_rename false Successfully renamed /memories/projects to /memories/work",
		created,
		"toolu_delete false Successfully deleted /memories/scratch.md",
		"toolu_tail false Here's the content of /memories/user.md with line numbers:\n" +
			"     2\tlang: Go\n     3\tname: Kamal\n     4\tdrink: coffee\n     5\t",
		"toolu_escape true Path /memories/../secrets would escape /memories directory",
		inserted, created,
	})

	// The files: the insert landed once, scratch.md stays deleted.
	ns := "kamal_40example.com/memories/"
	eqSlice(t, "files", list(t, e.Store, "", 100), []string{ns + "user.md", ns + "work/agentmem.md"})
	eq(t, "user.md", read(t, e.Store, ns+"user.md", 1000).Content, "# User\nlang: Go\nname: Kamal\ndrink: coffee\n")
	eq(t, "agentmem.md", read(t, e.Store, ns+"work/agentmem.md", 1000).Content, "status: draft\n")
	listing, err := tl.Listing(ctx(t), "kamal@example.com")
	if err != nil || !strings.Contains(listing, "/memories/work/agentmem.md") || strings.Contains(listing, "scratch") {
		t.Fatalf("listing = %q, %v", listing, err)
	}
}
