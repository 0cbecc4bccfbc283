package anthropic

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

	"github.com/agentmem/agentmem/core/store"
)

// scriptedModel is an httptest Messages API server that plays a scripted
// conversation: each turn's tool_use blocks, then a final text answer. It
// records the tool_result texts it receives.
type scriptedModel struct {
	t     *testing.T
	turns [][]map[string]any // the inputs of each turn's memory tool_use blocks

	mu      sync.Mutex
	n       int
	results []string // "<tool_use_id> <is_error> <text>"
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.URL.Path != "/v1/messages" || !strings.Contains(r.Header.Get("anthropic-beta"), string(Beta)) {
		m.t.Errorf("request %s, beta %q", r.URL.Path, r.Header.Get("anthropic-beta"))
	}
	var req struct {
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		m.t.Errorf("decode: %v", err)
	}
	if len(req.Tools) != 1 || req.Tools[0]["type"] != "memory_20250818" || req.Tools[0]["name"] != "memory" {
		m.t.Errorf("tools = %v", req.Tools)
	}
	if m.n > 0 { // the last message answers the previous turn's tool_use blocks
		last := req.Messages[len(req.Messages)-1]
		if last.Role != "user" || len(last.Content) != len(m.turns[m.n-1]) {
			m.t.Errorf("turn %d: last message %s with %d blocks", m.n, last.Role, len(last.Content))
		}
		for i, raw := range last.Content {
			var b struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(raw, &b)
			if b.Type != "tool_result" || b.ToolUseID != toolUseID(m.n-1, i) || len(b.Content) != 1 {
				m.t.Errorf("turn %d block %d: %s", m.n, i, raw)
				continue
			}
			m.results = append(m.results, fmt.Sprintf("%s %v %s", b.ToolUseID, b.IsError, b.Content[0].Text))
		}
	}
	content := []map[string]any{}
	stop := "end_turn"
	if m.n < len(m.turns) {
		for i, in := range m.turns[m.n] {
			content = append(content, map[string]any{"type": "tool_use", "id": toolUseID(m.n, i), "name": "memory", "input": in})
		}
		stop = "tool_use"
	} else {
		content = append(content, map[string]any{"type": "text", "text": "Noted."})
	}
	m.n++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("msg_%d", m.n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10},
	})
}

func toolUseID(turn, i int) string { return fmt.Sprintf("toolu_%d_%d", turn, i) }

// TestEndToEnd drives the official SDK client against a scripted model and
// lets the tool execute each memory command, on memstore (the e2e module's
// TestAnthropicEndToEnd runs a conversation on every backend).
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	for _, b := range backends[:1] {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			model := &scriptedModel{t: t, turns: [][]map[string]any{
				{{"command": "view", "path": "/memories"}},
				{{"command": "create", "path": "/memories/user.md", "file_text": "# User\nname: Kamal\ndrink: tea\n"},
					{"command": "create", "path": "/memories/projects/agentmem.md", "file_text": "status: draft\n"}},
				{{"command": "str_replace", "path": "/memories/user.md", "old_str": "drink: tea", "new_str": "drink: coffee"},
					{"command": "insert", "path": "/memories/user.md", "insert_line": 1, "insert_text": "lang: Go"}},
				{{"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/work"},
					{"command": "create", "path": "/memories/scratch.md", "file_text": "tmp"}},
				{{"command": "delete", "path": "/memories/scratch.md"},
					{"command": "view", "path": "/memories/user.md", "view_range": []int{2, -1}},
					{"command": "view", "path": "/memories/../secrets"}},
			}}
			srv := httptest.NewServer(model)
			defer srv.Close()
			client := sdk.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))

			s := store.New(b.open(t), nil)
			defer s.Close()
			tl := newTool(t, s)
			params := sdk.BetaMessageNewParams{
				Model:     "claude-sonnet-4-5",
				MaxTokens: 1024,
				Tools:     []sdk.BetaToolUnionParam{ToolParam()},
				Betas:     []sdk.AnthropicBeta{Beta},
				Messages:  []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("Remember: I'm Kamal, I drink coffee."))},
			}
			for range 10 {
				msg, err := client.Beta.Messages.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				params.Messages = append(params.Messages, msg.ToParam())
				if msg.StopReason != sdk.BetaStopReasonToolUse {
					break
				}
				results, err := tl.HandleMessage(t.Context(), "kamal@example.com", msg)
				if err != nil {
					t.Fatal(err)
				}
				params.Messages = append(params.Messages, sdk.NewBetaUserMessage(results...))
			}
			want := []string{
				"toolu_0_0 false Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories",
				"toolu_1_0 false File created successfully at: /memories/user.md",
				"toolu_1_1 false File created successfully at: /memories/projects/agentmem.md",
				"toolu_2_0 false The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
					"     1\t# User\n     2\tname: Kamal\n     3\tdrink: coffee\n     4\t",
				"toolu_2_1 false The file /memories/user.md has been edited.",
				"toolu_3_0 false Successfully renamed /memories/projects to /memories/work",
				"toolu_3_1 false File created successfully at: /memories/scratch.md",
				"toolu_4_0 false Successfully deleted /memories/scratch.md",
				"toolu_4_1 false Here's the content of /memories/user.md with line numbers:\n" +
					"     2\tlang: Go\n     3\tname: Kamal\n     4\tdrink: coffee\n     5\t",
				"toolu_4_2 true Path /memories/../secrets would escape /memories directory",
			}
			if got := strings.Join(model.results, "\n---\n"); got != strings.Join(want, "\n---\n") {
				t.Fatalf("tool results:\n%s\nwant\n%s", got, strings.Join(want, "\n---\n"))
			}
			got := dump(files(t, s, ""))
			wantFiles := "kamal_40example.com/memories/user.md = # User\nlang: Go\nname: Kamal\ndrink: coffee\n\n" +
				"kamal_40example.com/memories/work/agentmem.md = status: draft\n\n"
			if got != wantFiles {
				t.Fatalf("files:\n%s\nwant\n%s", got, wantFiles)
			}
			listing, err := tl.ListingBlock(t.Context(), "kamal@example.com")
			if err != nil || !strings.Contains(listing.Text, "/memories/work/agentmem.md") {
				t.Fatalf("listing = %q, %v", listing.Text, err)
			}
		})
	}
}
